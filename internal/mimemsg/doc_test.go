package mimemsg

import (
	"go/build"
	"strings"
	"testing"
)

// TestImports keeps the layering the package doc promises: the standard
// library and internal/qp, nothing of templates, calls or transports.
func TestImports(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range pkg.Imports {
		first, _, _ := strings.Cut(path, "/")
		switch {
		case !strings.Contains(first, "."): // standard library
		case path == "github.com/postroom/postroom/internal/qp":
		default:
			t.Errorf("imports %s", path)
		}
	}
	if len(pkg.Imports) == 0 {
		t.Error("no imports found")
	}
}
