package outbox

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
)

// ErrNotMigrated: the database lacks the outbox's tables or River's, or
// holds older versions of them than this build needs. Run Migrate, which
// is safe at every start of every instance. Check reports it before the
// first call; Enqueue and the Worker wrap it when the database says a
// table is missing.
var ErrNotMigrated = errors.New("outbox: the database is not migrated: run outbox.Migrate (safe at every start, from every instance)")

// Check tells whether the database of o's pool is ready for o: the
// outbox's tables at SchemaVersion and River's at the version this build
// of River needs. It returns nil, an error wrapping ErrNotMigrated saying
// what is missing, or the error that kept it from asking (ctx's, or the
// connection's). It writes nothing. An application calls it at start, as
// it calls transport.SMTP.Check, to fail there rather than on the first
// Enqueue.
func (o *Outbox) Check(ctx context.Context) error {
	var version *int
	err := o.pool.QueryRow(ctx, `SELECT max(version) FROM postroom_outbox_schema`).Scan(&version)
	switch {
	case undefinedTable(err):
		return fmt.Errorf("outbox: Check: %w (no outbox tables)", ErrNotMigrated)
	case err != nil:
		return fmt.Errorf("outbox: Check: %w", err)
	case version == nil || *version < SchemaVersion:
		have := 0
		if version != nil {
			have = *version
		}
		return fmt.Errorf("outbox: Check: %w (outbox schema version %d, this build needs %d)", ErrNotMigrated, have, SchemaVersion)
	case *version > SchemaVersion:
		return fmt.Errorf("outbox: Check: database schema version %d is newer than this package's %d", *version, SchemaVersion)
	}
	migrator, err := rivermigrate.New(riverpgxv5.New(o.pool), nil)
	if err != nil {
		return fmt.Errorf("outbox: Check: %w", err)
	}
	res, err := migrator.Validate(ctx, nil)
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

// undefinedTable reports whether err is PostgreSQL's undefined_table
// (SQLSTATE 42P01): a query named a table that the database lacks.
func undefinedTable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "42P01"
}

// notMigrated wraps ErrNotMigrated around err when err says a table is
// missing, and returns err as it is otherwise.
func notMigrated(err error) error {
	if undefinedTable(err) {
		return fmt.Errorf("%w: %w", ErrNotMigrated, err)
	}
	return err
}
