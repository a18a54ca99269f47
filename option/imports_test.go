package option_test

import (
	"strings"
	"testing"

	"github.com/postroom/postroom/internal/testkit/testenv"
)

// TestImports checks that the package links only the standard library,
// so that every package of the module (transport and delivery included)
// can import it without linking anything else.
func TestImports(t *testing.T) {
	t.Parallel()
	for _, pkg := range testenv.Deps(t, "github.com/postroom/postroom/option") {
		if first, _, _ := strings.Cut(pkg, "/"); strings.Contains(first, ".") && pkg != "github.com/postroom/postroom/option" {
			t.Errorf("option links %s", pkg)
		}
	}
}
