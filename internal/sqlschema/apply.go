package sqlschema

import (
	"context"
	"fmt"

	"github.com/postroom/postroom/sqldb"
)

// Apply brings the schema recorded in table (version integer primary
// key, created when missing) up to want within tx: it applies, in version
// order, each of ms newer than the table's highest version, and records
// it. A database whose version is newer than want is left alone and
// reported as an error. The caller holds the advisory lock that keeps
// instances starting together from applying a version twice, and commits
// tx; table is a constant of the caller's, never input.
func Apply(ctx context.Context, tx sqldb.Tx, table string, ms []Migration, want int) error {
	ddl := `CREATE TABLE IF NOT EXISTS ` + table + ` (
		version integer PRIMARY KEY,
		applied_at timestamptz NOT NULL DEFAULT now()
	)`
	if tx.Engine() == sqldb.SQLite {
		ddl = `CREATE TABLE IF NOT EXISTS ` + table + ` (
		version integer PRIMARY KEY,
		applied_at integer NOT NULL DEFAULT (CAST(unixepoch('subsec') * 1000000 AS integer))
	)`
	}
	if _, err := tx.Exec(ctx, ddl); err != nil {
		return err
	}
	var current int
	if err := tx.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM `+table).Scan(&current); err != nil {
		return err
	}
	if current > want {
		return fmt.Errorf("database schema version %d is newer than this package's %d", current, want)
	}
	for _, m := range ms {
		if m.Version <= current {
			continue
		}
		if _, err := tx.Exec(ctx, m.SQL); err != nil {
			return fmt.Errorf("%s: %w", m.Name, err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO `+table+` (version) VALUES ($1)`, m.Version); err != nil {
			return err
		}
	}
	return nil
}
