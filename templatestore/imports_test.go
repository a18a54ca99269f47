package templatestore_test

import (
	"strings"
	"testing"

	"github.com/postroom/postroom/internal/testkit/testenv"
)

// TestImportsNoDriver checks that postroom links no database code, and
// that this package links no engine: neither pgx nor a database/sql
// driver (the application's sqldb.DB brings its own).
func TestImportsNoDriver(t *testing.T) {
	drivers := []string{"github.com/jackc/pgx/v5/stdlib", "github.com/lib/pq", "github.com/go-sql-driver/", "modernc.org/sqlite", "github.com/mattn/"}
	for _, pkg := range testenv.Deps(t, "github.com/postroom/postroom") {
		for _, driver := range append(drivers, "github.com/jackc/", "database/sql") {
			if strings.HasPrefix(pkg, driver) {
				t.Errorf("postroom imports %s", pkg)
			}
		}
	}
	for _, pkg := range testenv.Deps(t, "github.com/postroom/postroom/templatestore") {
		for _, driver := range append(drivers, "github.com/jackc/") {
			if strings.HasPrefix(pkg, driver) {
				t.Errorf("templatestore imports %s", pkg)
			}
		}
	}
}
