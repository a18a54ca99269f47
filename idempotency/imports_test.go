package idempotency

import (
	"strings"
	"testing"

	"github.com/postroom/postroom/internal/testkit/testenv"
)

// TestImports checks that this package links pgx (the application's
// pool) but no database/sql driver nor River, and that postroom does not
// import it.
func TestImports(t *testing.T) {
	for _, pkg := range testenv.Deps(t, "github.com/postroom/postroom/idempotency") {
		for _, driver := range []string{"github.com/jackc/pgx/v5/stdlib", "github.com/riverqueue/", "github.com/lib/pq", "github.com/go-sql-driver/", "modernc.org/sqlite", "github.com/mattn/"} {
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
