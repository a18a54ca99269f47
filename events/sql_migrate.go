package events

import (
	"context"
	"embed"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/postroom/postroom/internal/sqlschema"
	"github.com/postroom/postroom/sqldb/pgxdb"
)

// SQLSchemaVersion is the version of the schema that SQL reads and
// MigrateSQL brings a database to. Version 2 adds each event's list
// (postroom.Event.List); the events recorded before read with none.
// Version 3 indexes the events by message and by address (Search,
// Info). Version 4 adds each event's call (call id, sender, subject,
// templates) and indexes the events by call. Version 5 partitions the
// table by day (SQL.Rotate); the events written before become one
// partition, copied nowhere.
const SQLSchemaVersion = 5

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
	if err := sqlschema.Migrate(ctx, pgxdb.New(pool), migrationLockKey, "postroom_events_schema", ms, SQLSchemaVersion); err != nil {
		return fmt.Errorf("events: migrate: %w", err)
	}
	return nil
}
