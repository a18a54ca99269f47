package mimemsg

import (
	"errors"
	"fmt"
	"mime"
	"net/mail"
	"strings"
	"testing"
)

func TestMIMEEncodedWords(t *testing.T) {
	inputs := []string{
		"Zoë", "ü", "a_b=c?d e\tfü", "\x01control", "bad \xff utf-8", "日本語のテキスト",
		strings.Repeat("é", 40), strings.Repeat("aé", 50), strings.Repeat("ü ", 100),
		strings.Repeat("x", 61) + "ü" + strings.Repeat("y", 70), strings.Repeat("東京", 30),
		strings.Repeat("a", 46) + "é", strings.Repeat("a", 44) + "é",
	}
	for _, in := range inputs {
		for _, enc := range []mime.WordEncoder{mime.QEncoding, mime.BEncoding} {
			t.Run(fmt.Sprintf("%c/%.20s", enc, in), func(t *testing.T) {
				got, _ := appendWords([]byte("X-Test:"), 7, in, byte(enc))
				for _, l := range strings.Split(string(got), "\r\n") {
					if len(l) > 78 {
						t.Errorf("line of %d octets: %q", len(l), l)
					}
				}
				want := "X-Test: " + enc.Encode("utf-8", in)
				if u := mimeUnfold(t, string(got)); u != want {
					t.Errorf("unfolds to %q, want mime's %q", u, want)
				}
			})
		}
	}
}

func TestMIMEFolding(t *testing.T) {
	tests := []struct {
		name    string
		value   string
		wantErr bool
		maxLen  int // longest line allowed, without CRLF
	}{
		{"short", "hello world", false, 78},
		{"words", strings.Repeat("lorem ipsum ", 100), false, 78},
		{"long token between words", "a " + strings.Repeat("x", 300) + " b", false, 302},
		{"unbreakable 997", strings.Repeat("x", 997), false, 998},
		{"unbreakable 998", strings.Repeat("x", 998), true, 0},
		{"runs of white space", "a  \t b" + strings.Repeat(" c\t\td", 40) + "   ", false, 78},
		{"leading white space", "   " + strings.Repeat("y", 90), false, 100},
		{"only white space", strings.Repeat(" ", 100), false, 120},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			const prefix = "X-Long-Header:"
			got, err := appendFolded([]byte(prefix), len(prefix), tt.value)
			if tt.wantErr {
				if !errors.Is(err, ErrHeaderLine) {
					t.Fatalf("err = %v, want ErrHeaderLine", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("appendFolded: %v", err)
			}
			for _, l := range strings.Split(string(got), "\r\n") {
				if len(l) > tt.maxLen {
					t.Errorf("line of %d octets (limit %d): %q", len(l), tt.maxLen, l)
				}
			}
			if u := mimeUnfold(t, string(got)); u != prefix+" "+tt.value {
				t.Errorf("unfolds to %q, want %q", u, prefix+" "+tt.value)
			}
		})
	}

	t.Run("Append", func(t *testing.T) {
		l := mimeTestLayout(mimeTestParts{Text: true})
		sk, err := New(l, mimeSeededRand(1))
		if err != nil {
			t.Fatal(err)
		}
		v := mimeTestVarying()
		v.HeaderValues = []string{strings.Repeat("x", 998)}
		dst := []byte("keep")
		got, err := sk.Append(dst, v)
		if !errors.Is(err, ErrHeaderLine) {
			t.Fatalf("err = %v, want ErrHeaderLine", err)
		}
		if string(got) != "keep" {
			t.Errorf("dst after an error = %q, want the original", got)
		}
	})
	t.Run("New", func(t *testing.T) {
		l := mimeTestLayout(mimeTestParts{Text: true})
		l.Headers[0].Value = strings.Repeat("x", 998)
		if _, err := New(l, mimeSeededRand(1)); !errors.Is(err, ErrHeaderLine) {
			t.Fatalf("err = %v, want ErrHeaderLine", err)
		}
	})
}

func TestMIMEAddressFastPath(t *testing.T) {
	tests := []struct{ name, addr string }{
		{"", "a@example.org"},
		{"Alice", "a@example.org"},
		{`Back\slash "quoted"`, "first.last@example.org"},
		{"a, b; <c> @d", "x+tag@example.org"},
		{"Zoë", "z@example.org"},
		{"Alice", "odd..dots@example.org"},
		{"Alice", ".lead@example.org"},
		{"Alice", "sp ace@example.org"},
		{"Alice", "no-at-sign"},
		{strings.Repeat("long name ", 10), "a@example.org"},
	}
	for _, tt := range tests {
		t.Run(tt.name+"/"+tt.addr, func(t *testing.T) {
			got, err := appendAddress(nil, 3, tt.name, tt.addr)
			if err != nil {
				t.Fatal(err)
			}
			want := " " + (&mail.Address{Name: tt.name, Address: tt.addr}).String()
			if u := strings.ReplaceAll(string(got), "\r\n", ""); u != want {
				t.Errorf("got %q, want %q", u, want)
			}
		})
	}
}
