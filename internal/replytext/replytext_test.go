package replytext

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestLine(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"ok", "ok"},
		{"550 5.1.1 no such user", "550 5.1.1 no such user"},
		{"too many\r\nconnections\x00", "too many connections"},
		{"  lead and trail  ", "lead and trail"},
		{"tab\there", "tab here"},
		{"multi\nline\nreply", "multi line reply"},
		{"non-ASCII  déjà\tvu", "non-ASCII déjà vu"},
		{"bad \xff byte", "bad byte"},
		{strings.Repeat("x", Max+10), strings.Repeat("x", Max)},
		{strings.Repeat("x", Max-1) + "é", strings.Repeat("x", Max-1)}, // a rune cut in two is dropped
	}
	for _, tt := range tests {
		if got := Line(tt.in); got != tt.want {
			t.Errorf("Line(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// FuzzLine checks Line's promise on any input: one line of valid UTF-8,
// at most Max octets, with no control character or doubled space, and
// unchanged when given its own output.
func FuzzLine(f *testing.F) {
	for _, s := range []string{"", "ok", "a\r\nb", " x ", "\xff", "é\té", strings.Repeat("a b", 300)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Line(s)
		if len(got) > Max || !utf8.ValidString(got) || strings.Contains(got, "  ") || strings.TrimSpace(got) != got {
			t.Fatalf("Line(%q) = %q", s, got)
		}
		for _, r := range got {
			if r != ' ' && isSpaceOrControl(r) {
				t.Fatalf("Line(%q) = %q holds %U", s, got, r)
			}
		}
		if again := Line(got); again != got {
			t.Fatalf("Line(Line(%q)) = %q, want %q", s, again, got)
		}
	})
}

func TestReply(t *testing.T) {
	tests := []struct {
		code           int
		enhanced, text string
		want           string
	}{
		{0, "", "", ""},
		{550, "", "", "550"},
		{550, "5.1.1", "", "550 5.1.1"},
		{550, "5.1.1", "no such user", "550 5.1.1 no such user"},
		{0, "", "relay offers no STARTTLS", "relay offers no STARTTLS"},
		{451, "", "try\r\nlater", "451 try later"},
	}
	for _, tt := range tests {
		if got := Reply(tt.code, tt.enhanced, tt.text); got != tt.want {
			t.Errorf("Reply(%d, %q, %q) = %q, want %q", tt.code, tt.enhanced, tt.text, got, tt.want)
		}
	}
}
