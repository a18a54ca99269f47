package testenv

import (
	"os/exec"
	"strings"
	"testing"
)

// Deps returns the packages pkg links (go list -deps, the standard
// library's included), for tests that hold a package to what it may
// import. It skips t when no go command is on the PATH, and fails it when
// go list fails or lists nothing.
func Deps(t *testing.T, pkg string) []string {
	t.Helper()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command to list the imports with: %v", err)
	}
	out, err := exec.CommandContext(t.Context(), goCmd, "list", "-deps", pkg).Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	deps := strings.Fields(string(out))
	if len(deps) == 0 {
		t.Fatalf("go list -deps %s printed no packages", pkg)
	}
	return deps
}
