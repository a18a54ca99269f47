package accountid

import (
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name, id string
		fit      bool
	}{
		{"empty", "", true},
		{"ascii", "shop-1", true},
		{"UTF-8", "compté", true},
		{"255 bytes", strings.Repeat("a", MaxBytes), true},
		{"255 bytes of UTF-8", strings.Repeat("é", MaxBytes/2) + "a", true},
		{"256 bytes", strings.Repeat("a", MaxBytes+1), false},
		{"NUL", "a\x00b", false},
		{"line feed", "a\nb", false},
		{"tab", "a\tb", false},
		{"DEL", "\x7f", false},
		{"C1 NEL", "a\u0085b", false},
		{"invalid byte", "a\xffb", false},
		{"truncated rune", "\xc3", false},
		{"surrogate", "\xed\xa0\x80", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Check(tc.id); (got == "") != tc.fit {
				t.Errorf("Check(%q) = %q; fit %v", tc.id, got, tc.fit)
			}
		})
	}
}

// FuzzCheck holds Check to its definition: an id is fit exactly when it
// is at most MaxBytes of valid UTF-8 without a character of Unicode's Cc.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{"", "shop", "a\x00", "a\u0085", "\xff", strings.Repeat("a", MaxBytes+1)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		want := len(id) <= MaxBytes && utf8.ValidString(id) && !strings.ContainsFunc(id, unicode.IsControl)
		if got := Check(id); (got == "") != want {
			t.Errorf("Check(%q) = %q; want fit %v", id, got, want)
		}
	})
}

func BenchmarkCheck(b *testing.B) {
	id := "shop-eu-1234"
	b.ReportAllocs()
	for b.Loop() {
		if Check(id) != "" {
			b.Fatal("refused")
		}
	}
}

// TestTooLongSaysMaxBytes: the problem's text, written out as a constant,
// names MaxBytes.
func TestTooLongSaysMaxBytes(t *testing.T) {
	if !strings.Contains(tooLong, strconv.Itoa(MaxBytes)) {
		t.Errorf("%q does not name %d", tooLong, MaxBytes)
	}
}
