package transport_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImports checks that this package stands alone: it implements the
// contract of package delivery and links neither the root package nor
// its template engine (internal/program), so a program that only
// delivers messages carries none of it.
func TestImports(t *testing.T) {
	t.Parallel()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command to list the imports with: %v", err)
	}
	out, err := exec.CommandContext(t.Context(), goCmd, "list", "-deps", "github.com/postroom/postroom/transport").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) == 0 {
		t.Fatal("go list printed no packages")
	}
	for _, pkg := range deps {
		if pkg == "github.com/postroom/postroom" || pkg == "github.com/postroom/postroom/internal/program" || strings.HasPrefix(pkg, "github.com/aymerick/raymond") {
			t.Errorf("transport imports %s", pkg)
		}
	}
}
