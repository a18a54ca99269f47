package templatestore

import (
	"context"
	"embed"
	"fmt"

	"github.com/postroom/postroom/internal/sqlschema"
	"github.com/postroom/postroom/sqldb"
)

// SQLSchemaVersion is the version of the PostgreSQL schema that this
// package's SQL store reads and Migrate brings a database to. SQLite's
// schema numbers its own versions (templatestore/sql/sqlite), from 1 with
// the schema as it is now.
const SQLSchemaVersion = 2

// sqliteSchemaVersion is the version of SQLite's schema.
const sqliteSchemaVersion = 1

// sqlSchema holds the schema's migrations, one file per version, named
// <version>_<what>.sql and applied in version order: PostgreSQL's in sql,
// SQLite's in sql/sqlite.
//
//go:embed sql/*.sql sql/sqlite/*.sql
var sqlSchema embed.FS

// migrationLockKey is the PostgreSQL advisory lock Migrate holds while it
// migrates, so instances starting together migrate one after another.
const migrationLockKey int64 = 0x706f_7374_746d_706c // "posttmpl"

// Migrate creates or updates the tables of the SQL store in db's
// database: postroom_templates (each template and its draft),
// postroom_template_versions (its published versions), and
// postroom_templatestore_schema, which records the versions applied.
// Version 2 of PostgreSQL's schema adds the published versions: each
// template of version 1 becomes its own draft and its published version
// 1, and calls go on using it.
//
// It applies, in one transaction, the migrations newer than the database's
// version, up to SQLSchemaVersion on PostgreSQL (SQLite's schema has
// versions of its own), and does nothing when the database is up to date,
// so it is safe to call at every start. Instances that call it at once
// wait for each other (on an advisory lock on PostgreSQL, for the write
// lock on SQLite); only one applies each version. A database whose
// version is newer than the package's (written by a newer release) is
// left alone and reported as an error. ctx bounds the whole migration;
// when it ends early, nothing is applied.
//
// The schema is embedded in the package (templatestore/sql/*.sql,
// templatestore/sql/sqlite/*.sql) for those who prefer to run it with
// their own migration tool; the SQL store needs the tables as the last
// version leaves them.
func Migrate(ctx context.Context, db sqldb.DB) error {
	if db == nil {
		return fmt.Errorf("templatestore: Migrate: nil db")
	}
	pattern, want := "sql/*.sql", SQLSchemaVersion
	if db.Engine() == sqldb.SQLite {
		pattern, want = "sql/sqlite/*.sql", sqliteSchemaVersion
	}
	migrations, err := sqlMigrations(pattern, want)
	if err != nil {
		return err
	}
	if err := sqlschema.Migrate(ctx, db, migrationLockKey, "postroom_templatestore_schema", migrations, want); err != nil {
		return fmt.Errorf("templatestore: migrate: %w", err)
	}
	return nil
}

// sqlMigrations returns the embedded migrations matching pattern in
// version order, from 1 to want without a gap.
func sqlMigrations(pattern string, want int) ([]sqlschema.Migration, error) {
	ms, err := sqlschema.Load(sqlSchema, pattern, want)
	if err != nil {
		return nil, fmt.Errorf("templatestore: %w", err)
	}
	return ms, nil
}
