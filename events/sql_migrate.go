package events

import (
	"context"
	"embed"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/postroom/postroom/internal/sqlschema"
)

// SQLSchemaVersion is the version of the schema that SQL reads and
// MigrateSQL brings a database to.
const SQLSchemaVersion = 1

// sqlSchema holds the schema's migrations, one file per version.
//
//go:embed sql/*.sql
var sqlSchema embed.FS

// migrationLockKey is the advisory lock MigrateSQL holds while it
// migrates, so instances starting together migrate one after another.
const migrationLockKey int64 = 0x706f_7374_6576_6e74 // "postevnt"

// MigrateSQL creates or updates the tables of SQL in pool's database
// (PostgreSQL 13 or newer): postroom_events, and
// postroom_events_schema, which records the versions applied.
//
// It applies, in one transaction under an advisory lock, the migrations
// newer than the database's version, so it is safe to call at every start
// and from instances starting at once. A database whose version is newer
// than SQLSchemaVersion is left alone and reported as an error. The
// migrations are embedded (events/sql/*.sql) for those who run their own
// migration tool.
func MigrateSQL(ctx context.Context, pool *pgxpool.Pool) error {
	ms, err := sqlschema.Load(sqlSchema, "sql/*.sql", SQLSchemaVersion)
	if err != nil {
		return fmt.Errorf("events: %w", err)
	}
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, migrationLockKey); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS postroom_events_schema (
			version integer PRIMARY KEY,
			applied_at timestamptz NOT NULL DEFAULT now()
		)`); err != nil {
			return err
		}
		var current int
		if err := tx.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM postroom_events_schema`).Scan(&current); err != nil {
			return err
		}
		if current > SQLSchemaVersion {
			return fmt.Errorf("database schema version %d is newer than this package's %d", current, SQLSchemaVersion)
		}
		for _, m := range ms {
			if m.Version <= current {
				continue
			}
			if _, err := tx.Exec(ctx, m.SQL); err != nil {
				return fmt.Errorf("%s: %w", m.Name, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO postroom_events_schema (version) VALUES ($1)`, m.Version); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			err = ctxErr
		}
		return fmt.Errorf("events: migrate: %w", err)
	}
	return nil
}
