package templatestore_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportsNoDriver checks that postroom and this package link no
// database driver: the application picks one.
func TestImportsNoDriver(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command to list the imports with: %v", err)
	}
	out, err := exec.CommandContext(t.Context(), goCmd, "list", "-deps",
		"github.com/postroom/postroom", "github.com/postroom/postroom/templatestore").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) == 0 {
		t.Fatal("go list printed no packages")
	}
	for _, pkg := range deps {
		for _, driver := range []string{"github.com/jackc/", "github.com/lib/pq", "github.com/go-sql-driver/", "modernc.org/sqlite", "github.com/mattn/"} {
			if strings.HasPrefix(pkg, driver) {
				t.Errorf("postroom or templatestore imports %s", pkg)
			}
		}
	}
}
