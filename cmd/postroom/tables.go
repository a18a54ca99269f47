package main

// Which of the stores' tables a database has, asked of its catalog, so
// that a database not migrated is said so on either engine.

import (
	"context"
	"errors"

	"github.com/postroom/postroom/sqldb"
)

// The tables the commands read, one of each store's.
const (
	outboxTable      = "postroom_outbox_calls"
	suppressionTable = "postroom_suppressions"
	templateTable    = "postroom_templates"
	eventTable       = "postroom_events"
)

// errNotMigrated is what a command's failure stands for when the
// database lacks a table it reads.
var errNotMigrated = errors.New("database not migrated")

// missingTables returns those of tables that q's database lacks.
func missingTables(ctx context.Context, q sqldb.Querier, tables ...string) ([]string, error) {
	query := `SELECT t FROM unnest($1::text[]) AS t WHERE to_regclass(t) IS NULL`
	if q.Engine() == sqldb.SQLite {
		query = `SELECT value FROM json_each($1) WHERE value NOT IN (SELECT name FROM sqlite_schema WHERE type = 'table')`
	}
	rows, err := q.Query(ctx, query, tables)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var missing []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			return nil, err
		}
		missing = append(missing, t)
	}
	return missing, rows.Err()
}
