package idempotency

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImports checks that this package links pgx (the application's
// pool) but no database/sql driver nor River, and that postroom does not
// import it.
func TestImports(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command to list the imports with: %v", err)
	}
	list := func(pkg string) []string {
		out, err := exec.CommandContext(t.Context(), goCmd, "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", pkg, err)
		}
		deps := strings.Fields(string(out))
		if len(deps) == 0 {
			t.Fatalf("go list %s printed no packages", pkg)
		}
		return deps
	}
	for _, pkg := range list("github.com/postroom/postroom/idempotency") {
		for _, driver := range []string{"github.com/jackc/pgx/v5/stdlib", "github.com/riverqueue/", "github.com/lib/pq", "github.com/go-sql-driver/", "modernc.org/sqlite", "github.com/mattn/"} {
			if strings.HasPrefix(pkg, driver) {
				t.Errorf("idempotency imports %s", pkg)
			}
		}
	}
	for _, pkg := range list("github.com/postroom/postroom") {
		if pkg == "github.com/postroom/postroom/idempotency" {
			t.Error("postroom imports idempotency")
		}
	}
}
