package templatestore

import (
	"context"
	"embed"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/postroom/postroom/internal/sqlschema"
	"github.com/postroom/postroom/sqldb/pgxdb"
)

// SQLSchemaVersion is the version of the schema that this package's SQL
// store reads and MigrateSQL brings a database to.
const SQLSchemaVersion = 2

// sqlSchema holds the schema's migrations, one file per version, named
// <version>_<what>.sql and applied in version order.
//
//go:embed sql/*.sql
var sqlSchema embed.FS

// migrationLockKey is the PostgreSQL advisory lock MigrateSQL holds while it
// migrates, so instances starting together migrate one after another.
const migrationLockKey int64 = 0x706f_7374_746d_706c // "posttmpl"

// MigrateSQL creates or updates the tables of the SQL store in the
// PostgreSQL database of pool: postroom_templates (each template and its
// draft), postroom_template_versions (its published versions), and
// postroom_templatestore_schema, which records the versions applied.
// Version 2 of the schema adds the published versions: each template of
// version 1 becomes its own draft and its published version 1, and calls
// go on using it.
//
// It applies, in one transaction, the migrations newer than the database's
// version, up to SQLSchemaVersion, and does nothing when the database is
// up to date, so it is safe to call at every start. Instances that call it
// at once wait for each other on an advisory lock; only one applies each
// version. A database whose version is newer than SQLSchemaVersion (written
// by a newer release) is left alone and reported as an error. ctx bounds
// the whole migration; when it ends early, nothing is applied.
//
// The schema is embedded in the package (templatestore/sql/*.sql) for
// those who prefer to run it with their own migration tool; the SQL store
// needs the tables as version 2 leaves them.
func MigrateSQL(ctx context.Context, pool *pgxpool.Pool) error {
	if pool == nil {
		return fmt.Errorf("templatestore: MigrateSQL: nil pool")
	}
	migrations, err := sqlMigrations()
	if err != nil {
		return err
	}
	if err := sqlschema.Migrate(ctx, pgxdb.New(pool), migrationLockKey, "postroom_templatestore_schema", migrations, SQLSchemaVersion); err != nil {
		return fmt.Errorf("templatestore: migrate: %w", err)
	}
	return nil
}

// sqlMigrations returns the embedded migrations in version order, from 1 to
// SQLSchemaVersion without a gap.
func sqlMigrations() ([]sqlschema.Migration, error) {
	ms, err := sqlschema.Load(sqlSchema, "sql/*.sql", SQLSchemaVersion)
	if err != nil {
		return nil, fmt.Errorf("templatestore: %w", err)
	}
	return ms, nil
}
