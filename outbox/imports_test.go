package outbox_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImports checks that the root package imports neither this package
// nor River nor pgx: only outbox brings them in.
func TestImports(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command to list the imports with: %v", err)
	}
	out, err := exec.CommandContext(t.Context(), goCmd, "list", "-deps", "github.com/postroom/postroom").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		for _, p := range []string{"github.com/postroom/postroom/outbox", "github.com/riverqueue/", "github.com/jackc/"} {
			if strings.HasPrefix(pkg, p) {
				t.Errorf("postroom imports %s", pkg)
			}
		}
	}
}
