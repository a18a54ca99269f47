// Package pgxdb is postroom's PostgreSQL engine: it turns a pgx
// *pgxpool.Pool into an sqldb.DB for the stores, as River's riverpgxv5
// turns it into a River driver.
//
//	pool, err := pgxpool.New(ctx, "postgres://...")
//	db := pgxdb.New(pool)
//	err = suppression.Migrate(ctx, db)
//
// The pool stays the application's: New does not close it.
package pgxdb

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/postroom/postroom/sqldb"
)

// DB is an sqldb.DB over a pgx pool. It is safe for concurrent use.
type DB struct{ pool *pgxpool.Pool }

var _ sqldb.DB = (*DB)(nil)

// New returns the DB of pool. pool must not be nil.
func New(pool *pgxpool.Pool) *DB { return &DB{pool: pool} }

// Pool returns the pool the DB runs on.
func (d *DB) Pool() *pgxpool.Pool { return d.pool }

// Engine returns sqldb.Postgres.
func (d *DB) Engine() sqldb.Engine { return sqldb.Postgres }

// Exec runs sql and returns the number of rows it changed.
func (d *DB) Exec(ctx context.Context, sql string, args ...any) (int64, error) {
	return exec(ctx, d.pool, sql, args)
}

// Query runs sql and returns its rows.
func (d *DB) Query(ctx context.Context, sql string, args ...any) (sqldb.Rows, error) {
	return query(ctx, d.pool, sql, args)
}

// QueryRow runs sql for at most one row.
func (d *DB) QueryRow(ctx context.Context, sql string, args ...any) sqldb.Row {
	return row{d.pool.QueryRow(ctx, sql, args...)}
}

// CopyFrom writes rows into table with PostgreSQL's COPY.
func (d *DB) CopyFrom(ctx context.Context, table string, columns []string, rows [][]any) (int64, error) {
	n, err := d.pool.CopyFrom(ctx, pgx.Identifier{table}, columns, pgx.CopyFromRows(rows))
	return n, Err(err)
}

// Begin starts a transaction.
func (d *DB) Begin(ctx context.Context) (sqldb.Tx, error) {
	tx, err := d.pool.Begin(ctx)
	if err != nil {
		return nil, Err(err)
	}
	return &Tx{tx: tx}, nil
}

// Tx is an sqldb.Tx over a pgx transaction.
type Tx struct{ tx pgx.Tx }

var _ sqldb.Tx = (*Tx)(nil)

// WrapTx returns the sqldb.Tx of tx, a transaction the application began
// on its own pool, so that a store writes in it (outbox.Enqueue in the
// application's transaction). Committing and rolling back stay the
// application's.
func WrapTx(tx pgx.Tx) *Tx { return &Tx{tx: tx} }

// PgxTx returns the pgx transaction under t.
func (t *Tx) PgxTx() pgx.Tx { return t.tx }

// Engine returns sqldb.Postgres.
func (t *Tx) Engine() sqldb.Engine { return sqldb.Postgres }

// Exec runs sql in the transaction.
func (t *Tx) Exec(ctx context.Context, sql string, args ...any) (int64, error) {
	return exec(ctx, t.tx, sql, args)
}

// Query runs sql in the transaction.
func (t *Tx) Query(ctx context.Context, sql string, args ...any) (sqldb.Rows, error) {
	return query(ctx, t.tx, sql, args)
}

// QueryRow runs sql in the transaction for at most one row.
func (t *Tx) QueryRow(ctx context.Context, sql string, args ...any) sqldb.Row {
	return row{t.tx.QueryRow(ctx, sql, args...)}
}

// CopyFrom writes rows into table with COPY, in the transaction.
func (t *Tx) CopyFrom(ctx context.Context, table string, columns []string, rows [][]any) (int64, error) {
	n, err := t.tx.CopyFrom(ctx, pgx.Identifier{table}, columns, pgx.CopyFromRows(rows))
	return n, Err(err)
}

// Commit commits the transaction.
func (t *Tx) Commit(ctx context.Context) error { return Err(t.tx.Commit(ctx)) }

// Rollback rolls the transaction back; after Commit it does nothing.
func (t *Tx) Rollback(ctx context.Context) error {
	err := t.tx.Rollback(ctx)
	if errors.Is(err, pgx.ErrTxClosed) {
		return nil
	}
	return Err(err)
}

type execQuerier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

func exec(ctx context.Context, q execQuerier, sql string, args []any) (int64, error) {
	tag, err := q.Exec(ctx, sql, args...)
	if err != nil {
		return 0, Err(err)
	}
	return tag.RowsAffected(), nil
}

func query(ctx context.Context, q execQuerier, sql string, args []any) (sqldb.Rows, error) {
	r, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, Err(err)
	}
	return &rows{r}, nil
}

type rows struct{ r pgx.Rows }

func (r *rows) Next() bool             { return r.r.Next() }
func (r *rows) Scan(dest ...any) error { return Err(r.r.Scan(dest...)) }
func (r *rows) Err() error             { return Err(r.r.Err()) }
func (r *rows) Close() error           { r.r.Close(); return Err(r.r.Err()) }

type row struct{ r pgx.Row }

func (r row) Scan(dest ...any) error { return Err(r.r.Scan(dest...)) }

// Err returns err as the sqldb kinds see it: pgx.ErrNoRows as
// sqldb.ErrNoRows, a unique violation (23505) as sqldb.ErrUniqueViolation,
// a serialization failure (40001) or deadlock (40P01) as sqldb.ErrConflict,
// each wrapping err; any other error as it is.
func Err(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return &sqldb.Error{Kind: sqldb.ErrNoRows, Err: err}
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "23505":
			return &sqldb.Error{Kind: sqldb.ErrUniqueViolation, Err: err}
		case "40001", "40P01":
			return &sqldb.Error{Kind: sqldb.ErrConflict, Err: err}
		}
	}
	return err
}
