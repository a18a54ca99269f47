package outbox_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImports checks that the root package imports neither this package
// nor River nor pgx (only outbox brings River in), and that this package
// links no HTTP handler: not httpapi, preview, html/template, nor net/http
// (a worker binary needs none of them).
func TestImports(t *testing.T) {
	t.Parallel()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command to list the imports with: %v", err)
	}
	deps := func(pkg string) []string {
		out, err := exec.CommandContext(t.Context(), goCmd, "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", pkg, err)
		}
		list := strings.Fields(string(out))
		if len(list) == 0 {
			t.Fatalf("go list %s printed no packages", pkg)
		}
		return list
	}
	for _, pkg := range deps("github.com/postroom/postroom") {
		for _, p := range []string{"github.com/postroom/postroom/outbox", "github.com/riverqueue/", "github.com/jackc/"} {
			if strings.HasPrefix(pkg, p) {
				t.Errorf("postroom imports %s", pkg)
			}
		}
	}
	for _, pkg := range deps("github.com/postroom/postroom/outbox") {
		switch pkg {
		case "github.com/postroom/postroom/httpapi", "github.com/postroom/postroom/preview", "html/template", "net/http":
			t.Errorf("outbox imports %s", pkg)
		}
	}
}
