package templatestore_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportsNoDriver checks that postroom links no database code, and
// that this package links pgx (the application's pool) but no
// database/sql driver.
func TestImportsNoDriver(t *testing.T) {
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
	drivers := []string{"github.com/jackc/pgx/v5/stdlib", "github.com/lib/pq", "github.com/go-sql-driver/", "modernc.org/sqlite", "github.com/mattn/"}
	for _, pkg := range list("github.com/postroom/postroom") {
		for _, driver := range append(drivers, "github.com/jackc/", "database/sql") {
			if strings.HasPrefix(pkg, driver) {
				t.Errorf("postroom imports %s", pkg)
			}
		}
	}
	for _, pkg := range list("github.com/postroom/postroom/templatestore") {
		for _, driver := range drivers {
			if strings.HasPrefix(pkg, driver) {
				t.Errorf("templatestore imports %s", pkg)
			}
		}
	}
}
