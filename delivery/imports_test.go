package delivery_test

import (
	"strings"
	"testing"

	"github.com/postroom/postroom/internal/testkit/testenv"
)

// TestImports checks that this package is a leaf: from the module it
// links only internal/replytext, and no package outside the standard
// library.
func TestImports(t *testing.T) {
	t.Parallel()
	for _, pkg := range testenv.Deps(t, "github.com/postroom/postroom/delivery") {
		switch {
		case pkg == "github.com/postroom/postroom/delivery", pkg == "github.com/postroom/postroom/internal/replytext":
		case strings.Contains(strings.SplitN(pkg, "/", 2)[0], "."):
			t.Errorf("delivery imports %s", pkg)
		}
	}
}
