package transport_test

import (
	"strings"
	"testing"

	"github.com/postroom/postroom/internal/testkit/testenv"
)

// TestImports checks that this package stands alone: it implements the
// contract of package delivery and links neither the root package nor
// its template engine (internal/program), so a program that only
// delivers messages carries none of it.
func TestImports(t *testing.T) {
	t.Parallel()
	for _, pkg := range testenv.Deps(t, "github.com/postroom/postroom/transport") {
		if pkg == "github.com/postroom/postroom" || pkg == "github.com/postroom/postroom/internal/program" || strings.HasPrefix(pkg, "github.com/aymerick/raymond") {
			t.Errorf("transport imports %s", pkg)
		}
	}
}
