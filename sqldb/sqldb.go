package sqldb

import (
	"context"
	"errors"
	"fmt"
)

// Engine is the database engine behind a DB: the dialect its SQL speaks.
type Engine string

// The engines.
const (
	Postgres Engine = "postgres"
	SQLite   Engine = "sqlite"
)

// Errors that an engine's error wraps, for the conditions a store
// branches on; check them with errors.Is.
var (
	// ErrNoRows: QueryRow's Scan found no row.
	ErrNoRows = errors.New("sqldb: no rows in result set")
	// ErrUniqueViolation: a statement would have written a second row of
	// a unique key.
	ErrUniqueViolation = errors.New("sqldb: unique violation")
	// ErrConflict: the engine gave up a statement or transaction because
	// of another one (PostgreSQL's serialization failure or deadlock,
	// SQLite's busy database after its timeout); it may succeed if run
	// again.
	ErrConflict = errors.New("sqldb: conflict with another transaction")
)

// Querier runs statements: a DB, or a Tx within it.
//
// Exec returns the number of rows a statement changed. Query's Rows must
// be closed. QueryRow's Row reports ErrNoRows from Scan when there is no
// row. CopyFrom writes rows (each one value per column) into table, the
// fastest way the engine has (PostgreSQL's COPY; SQLite's multi-row
// INSERT in a transaction), and returns how many it wrote.
type Querier interface {
	Engine() Engine
	Exec(ctx context.Context, sql string, args ...any) (int64, error)
	Query(ctx context.Context, sql string, args ...any) (Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) Row
	CopyFrom(ctx context.Context, table string, columns []string, rows [][]any) (int64, error)
}

// DB is a database of one engine: a pool of connections, safe for
// concurrent use. Begin starts a transaction.
type DB interface {
	Querier
	Begin(ctx context.Context) (Tx, error)
}

// Tx is a transaction. Commit or Rollback ends it; Rollback after Commit
// does nothing and returns nil, so it can be deferred.
type Tx interface {
	Querier
	Commit(ctx context.Context) error
	Rollback(ctx context.Context) error
}

// Rows is the result of Query, read row by row as database/sql's and pgx's
// are. Close must be called; Err reports what ended the iteration.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close() error
}

// Row is the result of QueryRow.
type Row interface {
	Scan(dest ...any) error
}

// BeginFunc runs fn in a transaction of db: it commits when fn returns
// nil and rolls back otherwise (fn's error is returned).
func BeginFunc(ctx context.Context, db DB, fn func(Tx) error) (err error) {
	tx, err := db.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback(context.WithoutCancel(ctx))
		}
	}()
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// Error is an engine's error of one of the kinds above: errors.Is(err,
// Kind) is true, and Unwrap gives the driver's own error.
type Error struct {
	Kind error // ErrNoRows, ErrUniqueViolation or ErrConflict
	Err  error // the driver's error
}

func (e *Error) Error() string {
	if e.Err == nil {
		return e.Kind.Error()
	}
	return fmt.Sprintf("%v: %v", e.Kind, e.Err)
}

// Is reports whether target is e's kind.
func (e *Error) Is(target error) bool { return target == e.Kind }

// Unwrap returns the driver's error.
func (e *Error) Unwrap() error { return e.Err }
