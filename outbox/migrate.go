package outbox

import (
	"context"
	"embed"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/postroom/postroom/internal/sqlschema"
	"github.com/postroom/postroom/sqldb/pgxdb"
)

// SchemaVersion is the version of the outbox's own tables that this
// package reads and writes and Migrate brings a database to.
const SchemaVersion = 4

// schema holds the migrations of the outbox's tables, one file per
// version, named <version>_<what>.sql and applied in version order. They
// are embedded for those who prefer to run them with their own migration
// tool (together with River's, see rivermigrate).
//
//go:embed sql/*.sql
var schema embed.FS

// migrateLock is the advisory lock Migrate holds, so that instances
// starting together migrate one after the other.
const migrateLock int64 = 0x706f_7374_6f75_7462 // "postoutb"

// Migrate creates or updates River's tables (River's own migrations,
// through rivermigrate, up to the version this build of River needs),
// then, in one transaction, the outbox's: postroom_outbox_calls,
// postroom_outbox_chunks, postroom_outbox_results (with the view
// postroom_outbox_recipients) and postroom_outbox_schema, which records
// the versions applied. Stop the instances of an older version before
// migrating to version 3: they write the table it replaces. Version 4
// adds each call's list (CallStatus.List), read from the bodies of the
// calls stored before; instances of version 3 may run beside it.
//
// It does nothing when the database is up to date, so it is safe to call
// at every start, from every instance at once: they wait for each other
// on an advisory lock. A database whose outbox schema is newer than
// SchemaVersion is left alone and reported as an error. When ctx ends
// early, the outbox's tables are left as they were (River's migrations
// applied by then stay).
func Migrate(ctx context.Context, pool *pgxpool.Pool) error {
	if pool == nil {
		return fmt.Errorf("outbox: Migrate: nil pool")
	}
	migrations, err := migrations()
	if err != nil {
		return err
	}
	// River's migrations run each in a transaction of their own (one adds
	// an enum value, which PostgreSQL does not let the same transaction
	// use), so the lock is a session's, held on conn until the end.
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return migrateError(ctx, err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, migrateLock); err != nil {
		conn.Conn().Close(context.WithoutCancel(ctx)) // the lock may be held: never back to the pool
		return migrateError(ctx, err)
	}
	defer func() {
		if _, err := conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, migrateLock); err != nil {
			conn.Conn().Close(context.WithoutCancel(ctx))
		}
	}()
	migrator, err := rivermigrate.New(riverpgxv5.New(pool), nil)
	if err != nil {
		return migrateError(ctx, err)
	}
	if _, err := migrator.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return migrateError(ctx, fmt.Errorf("river: %w", err))
	}
	tx, err := conn.Begin(ctx)
	if err != nil {
		return migrateError(ctx, err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) // after Commit, a no-op

	if err := sqlschema.Apply(ctx, pgxdb.WrapTx(tx), "postroom_outbox_schema", migrations, SchemaVersion); err != nil {
		return migrateError(ctx, err)
	}
	return migrateError(ctx, tx.Commit(ctx))
}

// migrateError wraps a migration's error; when ctx has ended, its error
// is the one reported, whatever the driver made of the cancellation.
func migrateError(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		return fmt.Errorf("outbox: migrate: %w", ctxErr)
	}
	return fmt.Errorf("outbox: migrate: %w", err)
}

// migrations returns the embedded migrations in version order, from 1 to
// SchemaVersion without a gap.
func migrations() ([]sqlschema.Migration, error) {
	ms, err := sqlschema.Load(schema, "sql/*.sql", SchemaVersion)
	if err != nil {
		return nil, fmt.Errorf("outbox: %w", err)
	}
	return ms, nil
}
