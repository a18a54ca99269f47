// Package sqlitedb is postroom's SQLite engine: one database file, on
// modernc.org/sqlite (pure Go, no cgo; River's own choice for SQLite), as
// an sqldb.DB for the stores. It is the embedded default: every store and
// the send-later queue in one file, for one application process.
//
//	db, err := sqlitedb.Open(ctx, "postroom.db", sqlitedb.Options{})
//	defer db.Close()
//	err = suppression.Migrate(ctx, db)
//
// Open sets the file up for that use: write-ahead logging (readers and the
// writer do not block each other's files), a busy timeout, foreign keys,
// and transactions that take the write lock when they begin (BEGIN
// IMMEDIATE), so two writers queue instead of failing. All statements of
// the process run on one connection, one at a time: SQLite has one writer
// anyway, and a queue in Go is fairer and faster than SQLite's busy
// retries.
//
// # One process
//
// A file serves one process. Open takes an exclusive lock on a file beside
// the database (its name ends in -lock) for as long as the DB is open; a
// second process gets an *InUseError saying to use PostgreSQL (package
// pgxdb) for several processes or instances. Opening the same file twice
// in one process is refused the same way: use one DB.
package sqlitedb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/postroom/postroom/sqldb"
)

// DefaultBusyTimeout is Options.BusyTimeout's default.
const DefaultBusyTimeout = 10 * time.Second

// Options configures Open. The zero Options is the default.
type Options struct {
	// BusyTimeout is how long a statement waits for a lock that something
	// else holds (a backup, the sqlite3 shell) before it fails with
	// sqldb.ErrConflict. Zero means DefaultBusyTimeout.
	BusyTimeout time.Duration
}

// InUseError is Open's error when another process (or another DB of this
// process) has the file open.
type InUseError struct {
	Path string
}

func (e *InUseError) Error() string {
	return fmt.Sprintf("sqlitedb: %s is in use by another process: SQLite serves one process; for several processes or instances, use PostgreSQL (postgres://...)", e.Path)
}

// DB is an sqldb.DB over one SQLite file. It is safe for concurrent use.
type DB struct {
	db     *sql.DB
	unlock func() error // releases the process lock; nil for New's
}

var _ sqldb.DB = (*DB)(nil)

// Open opens (creating it if needed) the SQLite database at path for this
// process; ":memory:" is a database in memory, gone at Close. Close the DB
// when done: that releases the file for another process.
func Open(ctx context.Context, path string, opts Options) (*DB, error) {
	if path == "" {
		return nil, errors.New("sqlitedb: Open: empty path")
	}
	if strings.ContainsAny(path, "?#") {
		return nil, fmt.Errorf("sqlitedb: Open: path %q has a ? or #", path)
	}
	if opts.BusyTimeout < 0 {
		return nil, fmt.Errorf("sqlitedb: Open: Options.BusyTimeout %v is negative", opts.BusyTimeout)
	}
	if opts.BusyTimeout == 0 {
		opts.BusyTimeout = DefaultBusyTimeout
	}
	var unlock func() error
	if path != ":memory:" {
		u, err := lockFile(path + "-lock")
		if err != nil {
			return nil, err
		}
		unlock = u
	}
	dsn := fmt.Sprintf("file:%s?_pragma=busy_timeout(%d)&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)&_txlock=immediate",
		path, opts.BusyTimeout.Milliseconds())
	if path != ":memory:" {
		dsn += "&_pragma=journal_mode(WAL)"
	}
	db, err := sql.Open("sqlite", dsn)
	if err == nil {
		db.SetMaxOpenConns(1)
		db.SetMaxIdleConns(1)
		db.SetConnMaxLifetime(0)
		db.SetConnMaxIdleTime(0)
		err = db.PingContext(ctx)
		if err != nil {
			db.Close()
		}
	}
	if err != nil {
		if unlock != nil {
			_ = unlock()
		}
		return nil, fmt.Errorf("sqlitedb: Open %s: %w", path, Err(err))
	}
	return &DB{db: db, unlock: unlock}, nil
}

// New returns the DB of an *sql.DB the application opened itself with the
// "sqlite" driver of modernc.org/sqlite. The application keeps it: Close
// does not close it, and New takes no process lock. It should be set up as
// Open does: WAL, a busy timeout, _txlock=immediate and one open
// connection.
func New(db *sql.DB) *DB { return &DB{db: db} }

// SQL returns the *sql.DB under d: River's riversqlite driver takes it.
func (d *DB) SQL() *sql.DB { return d.db }

// Close closes the database Open opened and releases the file; for New's
// DB it does nothing.
func (d *DB) Close() error {
	if d.unlock == nil {
		return nil
	}
	err := d.db.Close()
	if uerr := d.unlock(); err == nil {
		err = uerr
	}
	return err
}

// Engine returns sqldb.SQLite.
func (d *DB) Engine() sqldb.Engine { return sqldb.SQLite }

// Exec runs sql and returns the number of rows it changed.
func (d *DB) Exec(ctx context.Context, sql string, args ...any) (int64, error) {
	return exec(ctx, d.db, sql, args)
}

// Query runs sql and returns its rows.
func (d *DB) Query(ctx context.Context, sql string, args ...any) (sqldb.Rows, error) {
	return query(ctx, d.db, sql, args)
}

// QueryRow runs sql for at most one row.
func (d *DB) QueryRow(ctx context.Context, sql string, args ...any) sqldb.Row {
	return queryRow(ctx, d.db, sql, args)
}

// CopyFrom writes rows into table with multi-row INSERTs in one
// transaction.
func (d *DB) CopyFrom(ctx context.Context, table string, columns []string, rows [][]any) (int64, error) {
	if len(rows) == 0 {
		return 0, nil
	}
	tx, err := d.Begin(ctx)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	n, err := tx.CopyFrom(ctx, table, columns, rows)
	if err != nil {
		return 0, err
	}
	return n, tx.Commit(ctx)
}

// Begin starts a transaction; it holds the write lock from its start.
func (d *DB) Begin(ctx context.Context) (sqldb.Tx, error) {
	tx, err := d.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, Err(err)
	}
	return &Tx{tx: tx}, nil
}

// Tx is an sqldb.Tx over a database/sql transaction.
type Tx struct {
	tx *sql.Tx
}

var _ sqldb.Tx = (*Tx)(nil)

// WrapTx returns the sqldb.Tx of tx, a transaction the application began
// on the DB's *sql.DB (SQL), so that a store writes in it (outbox.Enqueue
// in the application's transaction). Committing and rolling back stay the
// application's.
func WrapTx(tx *sql.Tx) *Tx { return &Tx{tx: tx} }

// SQLTx returns the database/sql transaction under t: River's riversqlite
// driver takes it.
func (t *Tx) SQLTx() *sql.Tx { return t.tx }

// Engine returns sqldb.SQLite.
func (t *Tx) Engine() sqldb.Engine { return sqldb.SQLite }

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
	return queryRow(ctx, t.tx, sql, args)
}

// maxVariables is how many parameters one INSERT of CopyFrom binds at
// most (SQLite's limit is 32,766).
const maxVariables = 30000

// CopyFrom writes rows into table with multi-row INSERTs.
func (t *Tx) CopyFrom(ctx context.Context, table string, columns []string, rows [][]any) (int64, error) {
	if len(rows) == 0 {
		return 0, nil
	}
	per := max(1, min(500, maxVariables/len(columns)))
	var stmt *sql.Stmt
	defer func() {
		if stmt != nil {
			stmt.Close()
		}
	}()
	var n int64
	args := make([]any, 0, per*len(columns))
	for start := 0; start < len(rows); start += per {
		chunk := rows[start:min(start+per, len(rows))]
		args = args[:0]
		for _, r := range chunk {
			if len(r) != len(columns) {
				return n, fmt.Errorf("sqlitedb: CopyFrom %s: a row of %d values for %d columns", table, len(r), len(columns))
			}
			for _, v := range r {
				args = append(args, arg(v))
			}
		}
		q := insertSQL(table, columns, len(chunk))
		var err error
		if len(chunk) == per {
			if stmt == nil {
				if stmt, err = t.tx.PrepareContext(ctx, q); err != nil {
					return n, Err(err)
				}
			}
			_, err = stmt.ExecContext(ctx, args...)
		} else {
			_, err = t.tx.ExecContext(ctx, q, args...)
		}
		if err != nil {
			return n, Err(err)
		}
		n += int64(len(chunk))
	}
	return n, nil
}

func insertSQL(table string, columns []string, rows int) string {
	var b strings.Builder
	b.WriteString("INSERT INTO ")
	b.WriteString(quote(table))
	b.WriteString(" (")
	for i, c := range columns {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(quote(c))
	}
	b.WriteString(") VALUES ")
	row := "(" + strings.TrimSuffix(strings.Repeat("?,", len(columns)), ",") + ")"
	for i := range rows {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(row)
	}
	return b.String()
}

func quote(id string) string { return `"` + strings.ReplaceAll(id, `"`, `""`) + `"` }

// Commit commits the transaction.
func (t *Tx) Commit(ctx context.Context) error {
	return Err(t.tx.Commit())
}

// Rollback rolls the transaction back; after Commit it does nothing.
func (t *Tx) Rollback(ctx context.Context) error {
	err := t.tx.Rollback()
	if errors.Is(err, sql.ErrTxDone) {
		return nil
	}
	return Err(err)
}

// Err returns err as the sqldb kinds see it: sql.ErrNoRows as
// sqldb.ErrNoRows, a UNIQUE or PRIMARY KEY constraint failure as
// sqldb.ErrUniqueViolation, a busy or locked database as
// sqldb.ErrConflict, each wrapping err; any other error as it is.
func Err(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, sql.ErrNoRows) {
		return &sqldb.Error{Kind: sqldb.ErrNoRows, Err: err}
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch code := se.Code(); {
		case code == sqlite3.SQLITE_CONSTRAINT_UNIQUE || code == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			return &sqldb.Error{Kind: sqldb.ErrUniqueViolation, Err: err}
		case code&0xff == sqlite3.SQLITE_BUSY || code&0xff == sqlite3.SQLITE_LOCKED:
			return &sqldb.Error{Kind: sqldb.ErrConflict, Err: err}
		}
	}
	return err
}

func openLockFile(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
}
