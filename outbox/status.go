package outbox

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/postroom/postroom"
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
// themselves keep their final form. An unknown id is ErrNotFound, which
// wraps postroom.ErrCallNotFound; an error of Options.Events is Status's.
func (o *Outbox) Status(ctx context.Context, callID string) (*postroom.CallStatus, error) {
	var total int
	err := o.pool.QueryRow(ctx, `SELECT recipients FROM postroom_outbox_calls WHERE id = $1`, callID).Scan(&total)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("outbox: status: %w", err)
	}
	rows, err := o.pool.Query(ctx, `SELECT status, count(*) FROM postroom_outbox_recipients
		WHERE call_id = $1 AND status NOT IN ('reserved', 'deferred') GROUP BY status`, callID)
	if err != nil {
		return nil, fmt.Errorf("outbox: status: %w", err)
	}
	s := &postroom.CallStatus{ID: callID, Counts: map[postroom.Status]int{}}
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
	emails, err := callEmails(ctx, o.pool, callID, total)
	if err != nil {
		return nil, fmt.Errorf("outbox: status: %w", err)
	}
	rows, err = o.pool.Query(ctx, `SELECT idx, status, code, reason, send_id FROM postroom_outbox_recipients
		WHERE call_id = $1 ORDER BY idx`, callID)
	if err != nil {
		return nil, fmt.Errorf("outbox: status: %w", err)
	}
	defer rows.Close()
	s.Results = make([]postroom.Result, 0, total)
	for rows.Next() {
		var r postroom.Result
		var i int32
		var status, code string
		if err := rows.Scan(&i, &status, &code, &r.Reason, &r.SendID); err != nil {
			return nil, fmt.Errorf("outbox: status: %w", err)
		}
		if i >= 0 && int(i) < len(emails) {
			r.Email = emails[i]
		}
		r.Status, r.Code = postroom.Status(status), postroom.ReasonCode(code)
		s.Results = append(s.Results, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("outbox: status: %w", err)
	}
	rows.Close()
	if err := o.later(ctx, s); err != nil {
		return nil, err
	}
	return s, nil
}
