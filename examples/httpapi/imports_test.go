package main

import (
	"strings"
	"testing"

	"github.com/postroom/postroom/internal/testkit/testenv"
)

// TestImportsNoEngine: the packages this program serves with besides the
// stores (inbound, unsubscribe, httpapi) use the stores' types alone,
// through the sqldb seam, so a program made of them links no database
// driver: neither pgx nor SQLite. The engine is the program's choice
// (here, openDatabase's).
func TestImportsNoEngine(t *testing.T) {
	t.Parallel()
	for _, pkg := range []string{"inbound", "unsubscribe", "httpapi"} {
		path := "github.com/postroom/postroom/" + pkg
		var engines []string
		for _, dep := range testenv.Deps(t, path) {
			if strings.HasPrefix(dep, "github.com/jackc/pgx") || strings.HasPrefix(dep, "modernc.org/sqlite") ||
				strings.HasPrefix(dep, "github.com/postroom/postroom/sqldb/") {
				engines = append(engines, dep)
			}
		}
		if len(engines) > 0 {
			t.Errorf("%s links %d packages of a database engine: %s", path, len(engines), strings.Join(engines, ", "))
		}
	}
}
