package sendid

import (
	"encoding/hex"
	"strings"
	"testing"
)

func TestNormalize(t *testing.T) {
	id := strings.Repeat("0f", 16)
	for _, tc := range []struct {
		name, in, want string
	}{
		{"lower", id, id},
		{"upper", strings.ToUpper(id), id},
		{"mixed", "0F" + id[2:], id},
		{"empty", "", ""},
		{"short", id[:31], ""},
		{"long", id + "0", ""},
		{"not hex", "g" + id[1:], ""},
		{"space", " " + id[1:], ""},
		{"non-ASCII", "é" + id[2:], ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Normalize(tc.in); got != tc.want {
				t.Errorf("Normalize(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// FuzzNormalize holds Normalize to its definition: it keeps exactly the
// strings that decode as 16 bytes of hexadecimal, lower-cased, and is
// idempotent.
func FuzzNormalize(f *testing.F) {
	f.Add(strings.Repeat("aB", 16))
	f.Add("")
	f.Add(strings.Repeat("z", 32))
	f.Fuzz(func(t *testing.T, s string) {
		got := Normalize(s)
		b, err := hex.DecodeString(s)
		ok := err == nil && len(b) == 16
		switch {
		case ok && got != hex.EncodeToString(b):
			t.Errorf("Normalize(%q) = %q, want %q", s, got, hex.EncodeToString(b))
		case !ok && got != "":
			t.Errorf("Normalize(%q) = %q, want \"\"", s, got)
		case Normalize(got) != got:
			t.Errorf("Normalize is not idempotent on %q", got)
		}
	})
}
