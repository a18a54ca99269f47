package program

import (
	"go/build"
	"strings"
	"testing"
)

// TestImports holds the package to what its doc says it imports: the
// standard library and raymond's lexer and ast packages only.
func TestImports(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range pkg.Imports {
		first, _, _ := strings.Cut(path, "/")
		switch {
		case !strings.Contains(first, "."): // standard library
		case path == "github.com/aymerick/raymond/lexer", path == "github.com/aymerick/raymond/ast":
		default:
			t.Errorf("imports %s", path)
		}
	}
	if len(pkg.Imports) == 0 {
		t.Error("no imports found")
	}
}
