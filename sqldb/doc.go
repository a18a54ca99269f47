// Package sqldb is the seam between postroom's stores and the database
// engines under them, the way River keeps its core apart from its
// riverpgxv5 and riversqlite drivers.
//
// A store (suppression, events, templatestore, idempotency, outbox) keeps
// its types, its contract and its SQL in its own package and runs that
// SQL through a DB. It imports this package only, never an engine's
// driver, so a program that uses a store's types alone (inbound,
// unsubscribe, httpapi) links neither pgx nor SQLite. An engine package
// turns a connection pool into a DB:
//
//   - [github.com/postroom/postroom/sqldb/pgxdb] wraps a pgx
//     *pgxpool.Pool: PostgreSQL, for any number of application instances.
//   - [github.com/postroom/postroom/sqldb/sqlitedb] opens one SQLite file
//     with modernc.org/sqlite (no cgo): the embedded default, for one
//     application process.
//
// # The SQL a store writes
//
// Engine tells which dialect a store must speak; where the two differ the
// store holds both texts. Both engines take $1, $2, ... placeholders. The
// SQLite engine converts what SQLite has no type for, so that a store
// passes and scans the same Go values on both:
//
//   - a time.Time argument is stored as an integer of microseconds since
//     1970 UTC (PostgreSQL's timestamptz precision); a *time.Time or
//     **time.Time destination reads it back, in UTC;
//   - a []string, []int, []int32 or []int64 argument is passed as JSON text,
//     for json_each($n) where PostgreSQL's SQL says = ANY($n); a *[]string
//     destination reads JSON text back.
//
// # Errors
//
// ErrNoRows, ErrUniqueViolation and ErrConflict are the conditions a store
// branches on; an engine's error wraps the driver's own (errors.As still
// finds a *pgconn.PgError).
//
// # SQLite serves one process
//
// sqlitedb.Open takes the file for its process: a second process that
// opens it gets an error saying to use PostgreSQL for several instances.
// Inside the process every statement runs on one connection, one at a
// time: a store must not run a statement on a DB while it holds a Tx or
// an open Rows of the same DB (it would wait for itself).
package sqldb
