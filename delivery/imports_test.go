package delivery_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImports checks that this package is a leaf: from the module it
// links only internal/replytext, and beyond that only the standard
// library.
func TestImports(t *testing.T) {
	t.Parallel()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command to list the imports with: %v", err)
	}
	out, err := exec.CommandContext(t.Context(), goCmd, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", "github.com/postroom/postroom/delivery").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		switch pkg {
		case "github.com/postroom/postroom/delivery", "github.com/postroom/postroom/internal/replytext":
		default:
			t.Errorf("delivery imports %s", pkg)
		}
	}
}
