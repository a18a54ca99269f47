package outbox

// Steering a queued call: cancel it, or retry its waiting recipients now.

import (
	"context"
	"errors"
	"fmt"

	"github.com/riverqueue/river/rivertype"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/sqldb"
)

// ReasonCallCanceled is the reason code of a recipient whose call was
// cancelled (Cancel) before its message was handed over: its status is
// rejected, and it is never sent.
//
// It is not postroom.ReasonCanceled, whose recipients are deferred (a
// context ended, the message may be sent again): a cancelled call's
// recipients are final, and a caller that retries on ReasonCanceled must
// not retry them.
const ReasonCallCanceled postroom.ReasonCode = "call-canceled"

// Cancel cancels call callID: each recipient not yet handed over (not
// tried, or deferred) becomes rejected, ReasonCallCanceled, its reason
// "call-canceled: " followed by why (and the last attempt's reason of a
// deferred one), and the call's River jobs are cancelled, all in one
// transaction. It returns how many recipients it settled; a done call
// gives 0. An unknown id is ErrNotFound.
//
// A recipient that a running job has reserved (its message may be on its
// way) is left to that run, which writes its outcome: Cancel never makes
// up a result for a message that may have been delivered. Cancel marks
// the call's chunks before it reads them, and a run reserves no
// recipient of a marked chunk, so a run still going does not send a
// cancelled recipient; a final result is never replaced. River cancels the running job's
// context (see river.Client.JobCancel), which ends its current sends; a
// recipient of it that ends deferred is given up by the job (ReasonGaveUp)
// or, if the job was finishing as Cancel ran, left deferred without a
// job: calling Cancel again settles it.
func (o *Outbox) Cancel(ctx context.Context, callID, why string) (int, error) {
	tx, err := o.db.Begin(ctx)
	if err != nil {
		return 0, fmt.Errorf("outbox: Cancel: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) // after Commit, a no-op
	// The call's row, locked: two Cancels, or a Cancel and DeleteBefore,
	// take turns (on SQLite, the transaction holds the write lock).
	var exists bool
	err = tx.QueryRow(ctx, dialect(tx, `SELECT true FROM postroom_outbox_calls WHERE id = $1 FOR UPDATE`,
		`SELECT true FROM postroom_outbox_calls WHERE id = $1`), callID).Scan(&exists)
	if errors.Is(err, sqldb.ErrNoRows) {
		return 0, ErrNotFound
	}
	if err != nil {
		return 0, fmt.Errorf("outbox: Cancel: %w", err)
	}
	reason := string(ReasonCallCanceled)
	if why != "" {
		reason += ": " + why
	}
	// The call's chunks marked first: the marking waits for the job
	// writes under way, and from then on no run reserves a recipient of
	// them, nor settles one it did not reserve (see lease.put). Then
	// every recipient not tried, or deferred, gets its final result; one
	// that a run reserved is left to the run.
	if _, err := tx.Exec(ctx, `UPDATE postroom_outbox_chunks SET canceled = true WHERE call_id = $1`, callID); err != nil {
		return 0, fmt.Errorf("outbox: Cancel: %w", err)
	}
	chunks, err := openChunks(ctx, tx, callID)
	if err != nil {
		return 0, err
	}
	firsts := make([]int32, len(chunks))
	for k, c := range chunks {
		firsts[k] = c.first
	}
	rows, err := tx.Query(ctx, dialect(tx, `SELECT idx, status, reason FROM postroom_outbox_recipients
		WHERE call_id = $1 AND first = ANY($2)`, `SELECT idx, status, reason FROM postroom_outbox_recipients
		WHERE call_id = $1 AND first IN (SELECT value FROM json_each($2))`), callID, firsts)
	if err != nil {
		return 0, fmt.Errorf("outbox: Cancel: %w", err)
	}
	type found struct{ status, reason string }
	states := map[int32]found{}
	for rows.Next() {
		var i int32
		var f found
		if err := rows.Scan(&i, &f.status, &f.reason); err != nil {
			rows.Close()
			return 0, fmt.Errorf("outbox: Cancel: %w", err)
		}
		states[i] = f
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("outbox: Cancel: %w", err)
	}
	writes := make(map[int32]*entries, len(chunks))
	n := 0
	for _, c := range chunks {
		e := &entries{}
		for k := range c.emails {
			i := c.first + int32(k)
			f, ok := states[i]
			switch {
			case !ok:
				e.add(i, string(postroom.StatusRejected), string(ReasonCallCanceled), reason, "")
			case f.status == rowDeferred:
				e.add(i, string(postroom.StatusRejected), string(ReasonCallCanceled), reason+"; last attempt: "+f.reason, "")
			}
		}
		writes[c.first] = e
		n += e.len()
	}
	if err := copyWrites(ctx, tx, callID, writes); err != nil {
		return 0, fmt.Errorf("outbox: Cancel: %w", err)
	}
	jobs, err := o.callJobs(ctx, tx, callID)
	if err != nil {
		return 0, err
	}
	for _, j := range jobs {
		switch j.row.State {
		case rivertype.JobStateCompleted, rivertype.JobStateCancelled, rivertype.JobStateDiscarded:
			continue
		}
		if err := o.river.cancel(ctx, tx, j.row.ID); err != nil {
			return 0, fmt.Errorf("outbox: Cancel: job %d: %w", j.row.ID, err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return 0, fmt.Errorf("outbox: Cancel: %w", err)
	}
	return n, nil
}

// Retry makes the jobs of call callID that wait to retry deferred
// recipients (or a failed run) run now, in one transaction, through
// River's JobRetry, and returns how many deferred recipients those jobs
// hold. A job waiting for the call's send time (EnqueueOptions.At) with
// nothing deferred is left to wait; a running job is left alone. Each
// retried recipient keeps its count of attempts and Options.MaxAge still
// applies. An unknown id is ErrNotFound.
func (o *Outbox) Retry(ctx context.Context, callID string) (int, error) {
	tx, err := o.db.Begin(ctx)
	if err != nil {
		return 0, fmt.Errorf("outbox: Retry: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) // after Commit, a no-op
	var exists bool
	err = tx.QueryRow(ctx, `SELECT true FROM postroom_outbox_calls WHERE id = $1`, callID).Scan(&exists)
	if errors.Is(err, sqldb.ErrNoRows) {
		return 0, ErrNotFound
	}
	if err != nil {
		return 0, fmt.Errorf("outbox: Retry: %w", err)
	}
	// The deferred recipients by job (by its range's first index).
	rows, err := tx.Query(ctx, `SELECT ch.first, count(*) FROM postroom_outbox_chunks ch
		JOIN postroom_outbox_recipients r ON r.call_id = ch.call_id AND r.first = ch.first
		WHERE ch.call_id = $1 AND r.status = 'deferred'
		GROUP BY ch.first`, callID)
	if err != nil {
		return 0, fmt.Errorf("outbox: Retry: %w", err)
	}
	deferred := map[int]int{}
	for rows.Next() {
		var first, n int
		if err := rows.Scan(&first, &n); err != nil {
			rows.Close()
			return 0, fmt.Errorf("outbox: Retry: %w", err)
		}
		deferred[first] = n
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("outbox: Retry: %w", err)
	}
	jobs, err := o.callJobs(ctx, tx, callID)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, j := range jobs {
		switch j.row.State {
		case rivertype.JobStateRetryable:
		case rivertype.JobStateScheduled:
			if deferred[j.first] == 0 {
				continue // waiting for its send time
			}
		default:
			continue
		}
		if err := o.river.retry(ctx, tx, j.row.ID); err != nil {
			return 0, fmt.Errorf("outbox: Retry: job %d: %w", j.row.ID, err)
		}
		n += deferred[j.first]
	}
	if err := tx.Commit(ctx); err != nil {
		return 0, fmt.Errorf("outbox: Retry: %w", err)
	}
	return n, nil
}
