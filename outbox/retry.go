package outbox

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
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

// transient reports whether err may go away by itself: the server
// refused or lost the connection (a restart, a shutdown, too many
// connections), or a conflict between transactions. An error PostgreSQL
// reports about the statement itself is not: trying again would fail
// again.
func transient(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
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
