package outbox

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/postroom/postroom/sqldb"
)

// Waits between the tries of a write that failed for want of the
// database: doubled from retryFirst up to retryMax, for as long as the
// write's context allows (writeTimeout for the results of a batch).
const (
	retryFirst = 20 * time.Millisecond
	retryMax   = 500 * time.Millisecond
)

// retry runs write until it succeeds, fails for a reason other than the
// database being out of reach (see transient), or ctx ends; it returns
// write's last error. So a PostgreSQL restart of a few seconds delays a
// batch's writes instead of losing the outcomes they carry.
func retry(ctx context.Context, write func(context.Context) error) error {
	wait := retryFirst
	for {
		err := write(ctx)
		if err == nil || !transient(err) || ctx.Err() != nil {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		wait = min(2*wait, retryMax)
	}
}

// permanentError is an error that trying again would not mend: on
// SQLite, whose file is the process's own, any error but a conflict (a
// busy database).
type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

// permanent marks err, of a statement on q, as not transient when q is
// SQLite's and err no conflict; PostgreSQL's errors are judged by
// transient.
func permanent(q sqldb.Querier, err error) error {
	if err == nil || q.Engine() != sqldb.SQLite || errors.Is(err, sqldb.ErrConflict) {
		return err
	}
	return &permanentError{err: err}
}

// transient reports whether err may go away by itself: the server
// refused or lost the connection (a restart, a shutdown, too many
// connections), or a conflict between transactions (sqldb.ErrConflict,
// on either engine). An error PostgreSQL reports about the statement
// itself is not, nor a permanentError: trying again would fail again.
func transient(err error) bool {
	var perm *permanentError
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.As(err, &perm) {
		return false
	}
	if errors.Is(err, sqldb.ErrConflict) {
		return true
	}
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return true // the connection: refused, reset, closed
	}
	if len(pe.Code) < 2 {
		return false
	}
	switch pe.Code[:2] {
	case "08", // connection exception
		"57", // operator intervention: shutting down, starting up
		"53", // insufficient resources: too many connections
		"40": // transaction rollback: serialization, deadlock
		return true
	}
	return false
}
