package events

import (
	"context"
	"embed"
	"errors"
	"fmt"

	"github.com/postroom/postroom/internal/sqlschema"
	"github.com/postroom/postroom/sqldb"
)

// SQLSchemaVersion is the version of the PostgreSQL schema that SQL
// reads and Migrate brings a database to. Version 2 adds each event's list
// (postroom.Event.List); the events recorded before read with none.
// Version 3 indexes the events by message and by address (Search,
// Info). Version 4 adds each event's call (call id, sender, subject,
// templates) and indexes the events by call. Version 5 partitions the
// table by day (SQL.Rotate); the events written before become one
// partition, copied nowhere. Version 6 adds the table of kept message
// bodies (SQLOptions.KeepBodies).
const SQLSchemaVersion = 6

// sqliteSchemaVersion is the version of SQLite's schema, which numbers
// its own versions (sql/sqlite), from 1 with the schema as PostgreSQL's
// version 5 left it; version 2 adds the table of kept message bodies.
const sqliteSchemaVersion = 2

// sqlSchema holds the schema's migrations, one file per version, named
// <version>_<what>.sql and applied in version order: PostgreSQL's in sql,
// SQLite's in sql/sqlite. They are embedded for those who prefer to run
// them with their own migration tool.
//
//go:embed sql/*.sql sql/sqlite/*.sql
var sqlSchema embed.FS

// migrations returns the migrations of db's engine and its schema
// version.
func migrations(db sqldb.DB) ([]sqlschema.Migration, int, error) {
	pattern, want := "sql/*.sql", SQLSchemaVersion
	if db.Engine() == sqldb.SQLite {
		pattern, want = "sql/sqlite/*.sql", sqliteSchemaVersion
	}
	ms, err := sqlschema.Load(sqlSchema, pattern, want)
	return ms, want, err
}

// migrationLockKey is the advisory lock Migrate holds (PostgreSQL) while it
// migrates, so instances starting together migrate one after another.
const migrationLockKey int64 = 0x706f_7374_6576_6e74 // "postevnt"

// Migrate creates or updates the tables of SQL in db's database
// (PostgreSQL 13 or newer, or SQLite): postroom_events,
// postroom_event_bodies (SQLOptions.KeepBodies), and
// postroom_events_schema, which records the versions applied.
//
// It applies, in one transaction, the migrations newer than the
// database's version, up to SQLSchemaVersion on PostgreSQL (SQLite's
// schema has versions of its own), and does nothing when the database is
// up to date, so it is safe to call at every start, from every instance
// at once: on PostgreSQL they wait for each other on an advisory lock, on
// SQLite for the write lock. A database whose version is newer than the
// package's is left alone and reported as an error.
func Migrate(ctx context.Context, db sqldb.DB) error {
	if db == nil {
		return errors.New("events: Migrate: nil db")
	}
	ms, want, err := migrations(db)
	if err != nil {
		return fmt.Errorf("events: %w", err)
	}
	if err := sqlschema.Migrate(ctx, db, migrationLockKey, "postroom_events_schema", ms, want); err != nil {
		return fmt.Errorf("events: migrate: %w", err)
	}
	return nil
}
