package program

import (
	"strings"
	"testing"
)

// jsIndent is handlebars.js 4.7's invokePartialWrapper indentation, as
// written there: split on \n, prefix every line but an empty last one,
// join.
func jsIndent(result, indent string) string {
	lines := strings.Split(result, "\n")
	for i := range lines {
		if lines[i] == "" && i+1 == len(lines) {
			break
		}
		lines[i] = indent + lines[i]
	}
	return strings.Join(lines, "\n")
}

// FuzzIndent checks the in-place indentation of a partial's output against
// handlebars.js's algorithm, after a prefix that must stay as it is.
func FuzzIndent(f *testing.F) {
	f.Add("before", "a\nb\n", "  ")
	f.Add("", "\n\n", "\t")
	f.Add("x\n", "", " ")
	f.Add("", "no newline", "    ")
	f.Fuzz(func(t *testing.T, prefix, out, indent string) {
		if indent == "" {
			return // never called without an indent
		}
		s := &state{out: []byte(prefix + out), max: 1 << 30, steps: 1 << 30}
		if err := s.indent(len(prefix), indent); err != nil {
			t.Fatal(err)
		}
		if got, want := string(s.out), prefix+jsIndent(out, indent); got != want {
			t.Errorf("indent(%q, %q) after %q = %q, want %q", out, indent, prefix, got[len(prefix):], want[len(prefix):])
		}
	})
}
