package main

// The one line a failed command prints.

import (
	"errors"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/outbox"
)

// failure is an error whose message is the whole line the command
// prints after its name, said for the command line; err is what it
// stands for, for errors.Is and errors.As.
type failure struct {
	msg string
	err error
}

func (f *failure) Error() string { return f.msg }
func (f *failure) Unwrap() error { return f.err }

// undefinedTable is PostgreSQL's SQLSTATE for a table that does not
// exist (42P01 undefined_table).
const undefinedTable = "42P01"

// notMigratedLine is what a command says on a database that lacks the
// tables it reads.
const notMigratedLine = "the database is not migrated: run `postroom migrate` (safe to run again)"

// notMigrated reports whether err says the database lacks tables: the
// outbox's ErrNotMigrated (its Check, or a store that wraps it), a table
// missing from the catalog (database.open), or PostgreSQL's
// undefined_table from the other stores.
func notMigrated(err error) bool {
	var pe *pgconn.PgError
	return errors.Is(err, outbox.ErrNotMigrated) || errors.Is(err, errNotMigrated) || errors.As(err, &pe) && pe.Code == undefinedTable
}

// callError says what err means for call id: a call not found is named
// by its id, without the packages' prefixes; other errors are returned
// as they are.
func callError(id string, err error) error {
	if errors.Is(err, postroom.ErrCallNotFound) && !notMigrated(err) {
		return &failure{msg: "no call " + quote(id) + " in this database", err: err}
	}
	return err
}

// line is the message of a command's failure err, printed after the
// command's name: one line, each thing said once.
func line(err error) string {
	var f *failure
	switch {
	case notMigrated(err):
		return notMigratedLine
	case errors.As(err, &f):
		return f.msg
	}
	return err.Error()
}
