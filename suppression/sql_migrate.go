package suppression

import (
	"context"
	"embed"
	"fmt"

	"github.com/postroom/postroom/internal/sqlschema"
	"github.com/postroom/postroom/sqldb"
)

// SchemaVersion is the version of the PostgreSQL schema that SQL reads
// and writes and Migrate brings a database to. SQLite's schema numbers
// its own versions (sql/sqlite), from 1 with the schema as it is now.
const SchemaVersion = 2

// sqliteSchemaVersion is the version of SQLite's schema.
const sqliteSchemaVersion = 1

// schema holds the migrations, one file per version, named
// <version>_<what>.sql and applied in version order: PostgreSQL's in sql,
// SQLite's in sql/sqlite. They are embedded for those who prefer to run
// them with their own migration tool.
//
//go:embed sql/*.sql sql/sqlite/*.sql
var schema embed.FS

// migrateLock is the PostgreSQL advisory lock Migrate holds while it
// migrates, so that instances starting together migrate one after the
// other.
const migrateLock int64 = 0x706f_7374_7375_7070 // "postsupp"

// migrations returns the migrations of db's engine and the version they
// bring a database to.
func migrations(db sqldb.DB) ([]sqlschema.Migration, int, error) {
	pattern, want := "sql/*.sql", SchemaVersion
	if db.Engine() == sqldb.SQLite {
		pattern, want = "sql/sqlite/*.sql", sqliteSchemaVersion
	}
	ms, err := sqlschema.Load(schema, pattern, want)
	if err != nil {
		return nil, 0, fmt.Errorf("suppression: %w", err)
	}
	return ms, want, nil
}

// Migrate creates or updates the tables of SQL in db's database:
// postroom_suppressions, postroom_suppression_soft_bounces, and
// postroom_suppression_schema, which records the versions applied.
//
// It applies, in one transaction, the migrations newer than the
// database's version, up to SchemaVersion on PostgreSQL (SQLite's schema
// has versions of its own), and does nothing when the database is up to
// date, so it is safe to call at every start, from every instance at
// once: on PostgreSQL they wait for each other on an advisory lock, on
// SQLite for the write lock, and only one applies each version. A
// database whose version is newer than the package's (written by a newer
// release) is left alone and reported as an error. ctx bounds the whole
// migration; when it ends early, nothing is applied.
func Migrate(ctx context.Context, db sqldb.DB) error {
	if db == nil {
		return fmt.Errorf("suppression: Migrate: nil db")
	}
	ms, want, err := migrations(db)
	if err != nil {
		return err
	}
	if err := sqlschema.Migrate(ctx, db, migrateLock, "postroom_suppression_schema", ms, want); err != nil {
		return fmt.Errorf("suppression: migrate: %w", err)
	}
	return nil
}
