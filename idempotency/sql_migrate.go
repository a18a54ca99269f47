package idempotency

import (
	"context"
	"embed"
	"errors"
	"fmt"

	"github.com/postroom/postroom/internal/sqlschema"
	"github.com/postroom/postroom/sqldb"
)

// SchemaVersion is the version of the schema that SQL reads and writes
// and Migrate brings a database to.
const SchemaVersion = 1

// schema holds the migrations of each engine, one file per version, named
// <version>_<what>.sql and applied in version order: sql/postgres/*.sql
// and sql/sqlite/*.sql. They are embedded for those who prefer to run them
// with their own migration tool. PostgreSQL's version 1 is the schema
// that releases before versioned migrations applied at every start (their
// Schema variable), unchanged.
//
//go:embed sql/postgres/*.sql sql/sqlite/*.sql
var schema embed.FS

// migrateLock is the PostgreSQL advisory lock Migrate holds while it
// migrates, so that instances starting together migrate one after the
// other. Earlier releases took the same lock to apply their schema.
const migrateLock int64 = 0x706f7374726f6f6d // "postroom"

// schemaTable records the versions Migrate applied.
const schemaTable = "postroom_idempotency_schema"

// migrations returns the migrations of engine.
func migrations(engine sqldb.Engine) ([]sqlschema.Migration, error) {
	switch engine {
	case sqldb.Postgres:
		return sqlschema.Load(schema, "sql/postgres/*.sql", SchemaVersion)
	case sqldb.SQLite:
		return sqlschema.Load(schema, "sql/sqlite/*.sql", SchemaVersion)
	}
	return nil, fmt.Errorf("unknown engine %q", engine)
}

// Migrate creates or updates the tables of SQL in db's database:
// postroom_idempotency_calls, postroom_idempotency_recipients, and
// postroom_idempotency_schema, which records the versions applied.
//
// It applies, in one transaction, the migrations newer than the
// database's version, up to SchemaVersion, and does nothing when the
// database is up to date, so it is safe to call at every start, from
// every instance at once: on PostgreSQL they wait for each other on an
// advisory lock, and only one applies each version. A PostgreSQL database
// that has the tables from an earlier release (which applied them without
// a version) keeps them and its records: version 1 is that schema, and
// creates only what is missing. A database whose version is newer than
// SchemaVersion (written by a newer release) is left alone and reported as
// an error. ctx bounds the whole migration; when it ends early, nothing is
// applied.
func Migrate(ctx context.Context, db sqldb.DB) error {
	if db == nil {
		return errors.New("idempotency: Migrate: nil db")
	}
	ms, err := migrations(db.Engine())
	if err != nil {
		return fmt.Errorf("idempotency: migrate: %w", err)
	}
	if err := sqlschema.Migrate(ctx, db, migrateLock, schemaTable, ms, SchemaVersion); err != nil {
		return fmt.Errorf("idempotency: migrate: %w", err)
	}
	return nil
}
