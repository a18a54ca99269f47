package outbox

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/postroom/postroom/sqldb"
)

// ErrNotMigrated: the database lacks the outbox's tables or River's, or
// holds older versions of them than this build needs. Run Migrate, which
// is safe at every start of every instance. Check reports it before the
// first call; Enqueue and the Worker wrap it when the database says a
// table is missing.
var ErrNotMigrated = errors.New("outbox: the database is not migrated: run outbox.Migrate (safe at every start, from every instance)")

// Check tells whether o's database is ready for o: the outbox's tables
// at its engine's schema version (SchemaVersion, SQLiteSchemaVersion) and
// River's at the version this build of River needs. It returns nil, an
// error wrapping ErrNotMigrated saying what is missing, or the error that
// kept it from asking (ctx's, or the connection's). It writes nothing. An
// application calls it at start, as it calls transport.SMTP.Check, to
// fail there rather than on the first Enqueue.
func (o *Outbox) Check(ctx context.Context) error {
	want := SchemaVersion
	if o.db.Engine() == sqldb.SQLite {
		want = SQLiteSchemaVersion
	}
	ok, err := tablesExist(ctx, o.db, "postroom_outbox_schema")
	switch {
	case err != nil:
		return fmt.Errorf("outbox: Check: %w", err)
	case !ok:
		return fmt.Errorf("outbox: Check: %w (no outbox tables)", ErrNotMigrated)
	}
	var version *int
	err = o.db.QueryRow(ctx, `SELECT max(version) FROM postroom_outbox_schema`).Scan(&version)
	switch {
	case err != nil:
		return fmt.Errorf("outbox: Check: %w", err)
	case version == nil || *version < want:
		have := 0
		if version != nil {
			have = *version
		}
		return fmt.Errorf("outbox: Check: %w (outbox schema version %d, this build needs %d)", ErrNotMigrated, have, want)
	case *version > want:
		return fmt.Errorf("outbox: Check: database schema version %d is newer than this package's %d", *version, want)
	}
	if ok, err := tablesExist(ctx, o.db, "river_migration"); err != nil {
		return fmt.Errorf("outbox: Check: %w", err)
	} else if !ok {
		return fmt.Errorf("outbox: Check: %w (no River tables)", ErrNotMigrated)
	}
	res, err := o.river.validate(ctx)
	switch {
	case undefinedTable(err):
		return fmt.Errorf("outbox: Check: %w (no River tables)", ErrNotMigrated)
	case err != nil:
		return fmt.Errorf("outbox: Check: river: %w", err)
	case !res.OK:
		return fmt.Errorf("outbox: Check: %w (River: %s)", ErrNotMigrated, strings.Join(res.Messages, "; "))
	}
	return nil
}

// tablesExist reports whether q's database has every one of tables (in
// its search path, on PostgreSQL).
func tablesExist(ctx context.Context, q sqldb.Querier, tables ...string) (bool, error) {
	var n int
	err := q.QueryRow(ctx, dialect(q,
		`SELECT count(*) FROM unnest($1::text[]) AS t(name) WHERE to_regclass(t.name) IS NOT NULL`,
		`SELECT count(*) FROM sqlite_master WHERE type IN ('table', 'view') AND name IN (SELECT value FROM json_each($1))`),
		tables).Scan(&n)
	return n == len(tables), err
}

// undefinedTable reports whether err is PostgreSQL's undefined_table
// (SQLSTATE 42P01): a query named a table that the database lacks.
func undefinedTable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "42P01"
}

// notMigrated wraps ErrNotMigrated around err when a table is missing:
// PostgreSQL says so in err; on SQLite, q (the DB or the transaction the
// statement ran in) is asked whether the outbox's tables and River's are
// there. It returns err as it is otherwise.
func notMigrated(ctx context.Context, q sqldb.Querier, err error) error {
	if err == nil {
		return nil
	}
	missing := undefinedTable(err)
	if !missing && q != nil && q.Engine() == sqldb.SQLite && ctx.Err() == nil {
		ok, cerr := tablesExist(ctx, q, "postroom_outbox_calls", "postroom_outbox_chunks", "postroom_outbox_results", "river_job")
		missing = cerr == nil && !ok
	}
	if missing {
		return fmt.Errorf("%w: %w", ErrNotMigrated, err)
	}
	return err
}
