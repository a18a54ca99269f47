package outbox

import "github.com/postroom/postroom/sqldb"

// dialect returns the statement of q's engine: postgres on PostgreSQL,
// sqlite on SQLite. Where the two texts are the same, a statement is
// written once.
func dialect(q sqldb.Querier, postgres, sqlite string) string {
	if q.Engine() == sqldb.SQLite {
		return sqlite
	}
	return postgres
}
