package outbox

import (
	"context"
	"embed"
	"fmt"

	"log/slog"

	"github.com/postroom/postroom/internal/sqlschema"
	"github.com/postroom/postroom/sqldb"
	"github.com/postroom/postroom/sqldb/pgxdb"
)

// SchemaVersion is the version of the outbox's own tables on PostgreSQL
// that this package reads and writes and Migrate brings a database to.
const SchemaVersion = 4

// SQLiteSchemaVersion is SchemaVersion on SQLite, whose migrations
// (sql/sqlite/*.sql) are numbered on their own.
const SQLiteSchemaVersion = 1

// schema holds the migrations of the outbox's tables, one file per
// version, named <version>_<what>.sql and applied in version order. They
// are embedded for those who prefer to run them with their own migration
// tool (together with River's, see rivermigrate). PostgreSQL's are
// sql/*.sql, SQLite's sql/sqlite/*.sql.
//
//go:embed sql/*.sql sql/sqlite/*.sql
var schema embed.FS

// migrateLock is the advisory lock Migrate holds, so that instances
// starting together migrate one after the other.
const migrateLock int64 = 0x706f_7374_6f75_7462 // "postoutb"

// Migrate creates or updates River's tables (River's own migrations,
// through rivermigrate with the engine's River driver, up to the version
// this build of River needs), then, in one transaction, the outbox's:
// postroom_outbox_calls, postroom_outbox_chunks, postroom_outbox_results
// (with the view postroom_outbox_recipients) and postroom_outbox_schema,
// which records the versions applied. db is PostgreSQL's (pgxdb.New of a
// pool) or SQLite's (sqlitedb.Open).
//
// On PostgreSQL, stop the instances of an older version before migrating
// to version 3: they write the table it replaces. Version 4 adds each
// call's list (CallStatus.List), read from the bodies of the calls stored
// before; instances of version 3 may run beside it.
//
// It does nothing when the database is up to date, so it is safe to call
// at every start, from every instance at once: on PostgreSQL they wait
// for each other on an advisory lock (a SQLite file has one process). A
// database whose outbox schema is newer than this package's is left
// alone and reported as an error. When ctx ends early, the outbox's
// tables are left as they were (River's migrations applied by then stay).
func Migrate(ctx context.Context, db sqldb.DB) error {
	if db == nil {
		return fmt.Errorf("outbox: Migrate: nil DB")
	}
	r, err := riverFor(db, slog.New(slog.DiscardHandler))
	if err != nil {
		return migrateError(ctx, err)
	}
	if db.Engine() == sqldb.SQLite {
		ms, err := migrations(db.Engine())
		if err != nil {
			return err
		}
		if err := r.migrate(ctx); err != nil {
			return migrateError(ctx, fmt.Errorf("river: %w", err))
		}
		return migrateError(ctx, sqlschema.Migrate(ctx, db, migrateLock, "postroom_outbox_schema", ms, SQLiteSchemaVersion))
	}
	p, ok := db.(pgxPool)
	if !ok {
		return migrateError(ctx, fmt.Errorf("a PostgreSQL DB of type %T has no Pool method (use pgxdb.New)", db))
	}
	pool := p.Pool()
	ms, err := migrations(db.Engine())
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
	if err := r.migrate(ctx); err != nil {
		return migrateError(ctx, fmt.Errorf("river: %w", err))
	}
	tx, err := conn.Begin(ctx)
	if err != nil {
		return migrateError(ctx, err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) // after Commit, a no-op

	if err := sqlschema.Apply(ctx, pgxdb.WrapTx(tx), "postroom_outbox_schema", ms, SchemaVersion); err != nil {
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

// migrations returns the embedded migrations of engine in version
// order, from 1 to its schema version without a gap.
func migrations(engine sqldb.Engine) ([]sqlschema.Migration, error) {
	pattern, version := "sql/*.sql", SchemaVersion
	if engine == sqldb.SQLite {
		pattern, version = "sql/sqlite/*.sql", SQLiteSchemaVersion
	}
	ms, err := sqlschema.Load(schema, pattern, version)
	if err != nil {
		return nil, fmt.Errorf("outbox: %w", err)
	}
	return ms, nil
}
