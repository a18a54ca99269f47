package httpapi

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestDocErrorTable keeps the package documentation's table of statuses
// and codes and the code that writes them in step: every code an answer
// can carry is in the table, and every code in the table is one an answer
// can carry.
func TestDocErrorTable(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile(`(?m)^//\t([1-5][0-9][0-9]) +([a-z_]+) `)
	documented := map[string]bool{}
	for _, m := range row.FindAllStringSubmatch(string(doc), -1) {
		documented[m[2]] = true
	}
	if len(documented) < 10 {
		t.Fatalf("found %d rows in doc.go's table: has its layout changed?", len(documented))
	}
	written := map[string]bool{}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	// An apiError's Code, a code chosen by an error (callError's table),
	// and callError's default.
	code := regexp.MustCompile(`Code: "([a-z_]+)"|Err[A-Za-z]+, "([a-z_]+)"}|ves\[0\], "([a-z_]+)"`)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || f == "doc.go" {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range code.FindAllStringSubmatch(string(src), -1) {
			written[m[1]+m[2]+m[3]] = true
		}
	}
	for c := range written {
		if !documented[c] {
			t.Errorf("code %q is written by the handler but not in doc.go's table", c)
		}
	}
	for c := range documented {
		if !written[c] {
			t.Errorf("code %q is in doc.go's table but no answer carries it", c)
		}
	}
	if t.Failed() {
		t.Logf("documented %q; written %q", slices.Sorted(mapsKeys(documented)), slices.Sorted(mapsKeys(written)))
	}
}

func mapsKeys(m map[string]bool) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}
