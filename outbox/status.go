package outbox

import (
	"context"
	"errors"
	"fmt"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/sqldb"
)

// Status returns the progress of the call with id callID: its state,
// its counts by status (a recipient without a final result yet, not
// tried, being sent, or deferred and waiting for its retry, counts as
// postroom.StatusQueued) and, once it is done, every recipient's final
// result in input order ({email, status, reason, send_id}, with Code
// filled in; Err is not kept). The call is postroom.CallQueued while no
// recipient has a final result (those refused at Enqueue have one),
// postroom.CallRunning until all have, then postroom.CallDone. With
// Options.Events, a done call's status also shows what came back later
// for its messages that were handed over (postroom.CallStatus.Later: a
// bounce, a complaint, an unsubscribe), read in one lookup; the results
// themselves keep their final form. CallStatus.List is the call's list,
// stored by Enqueue beside the call (no body is read). An unknown id is ErrNotFound, which
// wraps postroom.ErrCallNotFound; an error of Options.Events is Status's.
func (o *Outbox) Status(ctx context.Context, callID string) (*postroom.CallStatus, error) {
	var total int
	var list string
	err := o.db.QueryRow(ctx, `SELECT recipients, list FROM postroom_outbox_calls WHERE id = $1`, callID).Scan(&total, &list)
	if errors.Is(err, sqldb.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("outbox: status: %w", err)
	}
	rows, err := o.db.Query(ctx, dialect(o.db, `SELECT u.status, count(*) FROM postroom_outbox_results r, unnest(r.status) AS u(status)
		WHERE r.call_id = $1 AND u.status NOT IN ('', 'reserved', 'deferred') GROUP BY u.status`,
		`SELECT u.value, count(*) FROM postroom_outbox_results r, json_each(r.status) AS u
		WHERE r.call_id = $1 AND u.value NOT IN ('', 'reserved', 'deferred') GROUP BY u.value`), callID)
	if err != nil {
		return nil, fmt.Errorf("outbox: status: %w", err)
	}
	s := &postroom.CallStatus{ID: callID, List: list, Counts: map[postroom.Status]int{}}
	final := 0
	for rows.Next() {
		var status string
		var n int
		if err := rows.Scan(&status, &n); err != nil {
			rows.Close()
			return nil, fmt.Errorf("outbox: status: %w", err)
		}
		s.Counts[postroom.Status(status)] += n
		final += n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("outbox: status: %w", err)
	}
	if final < total {
		s.Counts[postroom.StatusQueued] += total - final
		s.State = postroom.CallRunning
		if final == 0 {
			s.State = postroom.CallQueued
		}
		return s, nil
	}
	s.State = postroom.CallDone
	if s.Results, err = callResults(ctx, o.db, callID, total); err != nil {
		return nil, fmt.Errorf("outbox: status: %w", err)
	}
	if err := o.later(ctx, s); err != nil {
		return nil, err
	}
	return s, nil
}
