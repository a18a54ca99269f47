package outbox_test

import (
	"strings"
	"testing"

	"github.com/postroom/postroom/internal/testkit/testenv"
)

// TestImports checks that the root package imports neither this package
// nor River nor pgx (only outbox brings River in), and that this package
// links no HTTP handler: not httpapi, preview, html/template, nor net/http
// (a worker binary needs none of them), nor an SQLite library: an
// application on PostgreSQL links none (River's riversqlite driver is
// database/sql's; the application's sqlitedb.Open brings SQLite in).
func TestImports(t *testing.T) {
	t.Parallel()
	for _, pkg := range testenv.Deps(t, "github.com/postroom/postroom") {
		for _, p := range []string{"github.com/postroom/postroom/outbox", "github.com/riverqueue/", "github.com/jackc/"} {
			if strings.HasPrefix(pkg, p) {
				t.Errorf("postroom imports %s", pkg)
			}
		}
	}
	for _, pkg := range testenv.Deps(t, "github.com/postroom/postroom/outbox") {
		switch pkg {
		case "github.com/postroom/postroom/httpapi", "github.com/postroom/postroom/preview", "html/template", "net/http",
			"github.com/postroom/postroom/sqldb/sqlitedb":
			t.Errorf("outbox imports %s", pkg)
		}
		if strings.HasPrefix(pkg, "modernc.org/") {
			t.Errorf("outbox imports %s", pkg)
		}
	}
}
