package idempotency

import (
	"strings"
	"testing"

	"github.com/postroom/postroom/internal/testkit/testenv"
)

// TestImports checks that this package links no database driver (pgx,
// SQLite, database/sql's) nor River, only the sqldb seam, and that
// postroom does not import it.
func TestImports(t *testing.T) {
	for _, pkg := range testenv.Deps(t, "github.com/postroom/postroom/idempotency") {
		for _, driver := range []string{"github.com/jackc/", "github.com/riverqueue/", "github.com/lib/pq", "github.com/go-sql-driver/", "modernc.org/", "github.com/mattn/", "github.com/postroom/postroom/sqldb/"} {
			if strings.HasPrefix(pkg, driver) {
				t.Errorf("idempotency imports %s", pkg)
			}
		}
	}
	for _, pkg := range testenv.Deps(t, "github.com/postroom/postroom") {
		if pkg == "github.com/postroom/postroom/idempotency" {
			t.Error("postroom imports idempotency")
		}
	}
}
