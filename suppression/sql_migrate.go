package suppression

import (
	"context"
	"embed"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/postroom/postroom/internal/sqlschema"
	"github.com/postroom/postroom/sqldb/pgxdb"
)

// SchemaVersion is the version of the schema that SQL reads and writes
// and Migrate brings a database to.
const SchemaVersion = 2

// schema holds the migrations, one file per version, named
// <version>_<what>.sql and applied in version order. They are embedded
// for those who prefer to run them with their own migration tool.
//
//go:embed sql/*.sql
var schema embed.FS

// migrateLock is the PostgreSQL advisory lock Migrate holds while it
// migrates, so that instances starting together migrate one after the
// other.
const migrateLock int64 = 0x706f_7374_7375_7070 // "postsupp"

// Migrate creates or updates the tables of SQL in pool's database:
// postroom_suppressions, postroom_suppression_soft_bounces, and
// postroom_suppression_schema, which records the versions applied.
//
// It applies, in one transaction, the migrations newer than the
// database's version, up to SchemaVersion, and does nothing when the
// database is up to date, so it is safe to call at every start, from
// every instance at once: they wait for each other on an advisory lock,
// and only one applies each version. A database whose version is newer
// than SchemaVersion (written by a newer release) is left alone and
// reported as an error. ctx bounds the whole migration; when it ends
// early, nothing is applied.
func Migrate(ctx context.Context, pool *pgxpool.Pool) error {
	if pool == nil {
		return fmt.Errorf("suppression: Migrate: nil pool")
	}
	migrations, err := sqlschema.Load(schema, "sql/*.sql", SchemaVersion)
	if err != nil {
		return fmt.Errorf("suppression: %w", err)
	}
	if err := sqlschema.Migrate(ctx, pgxdb.New(pool), migrateLock, "postroom_suppression_schema", migrations, SchemaVersion); err != nil {
		return fmt.Errorf("suppression: migrate: %w", err)
	}
	return nil
}
