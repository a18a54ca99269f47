package outbox

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/postroom/postroom"
)

// CallStatus is a call's progress, as Status reads it. Its JSON form is
// {"call_id", "done", "counts", "results"}, where results, present once
// the call is done, are the spec's result entries in input order.
type CallStatus struct {
	CallID string `json:"call_id"`
	// Done is true when every recipient has a final result.
	Done bool `json:"done"`
	// Counts is the number of recipients by status. A recipient without a
	// final result yet (not tried, being sent, or deferred and waiting
	// for its retry) counts as postroom.StatusQueued.
	Counts map[postroom.Status]int `json:"counts"`
	// Results holds, when Done, every recipient's final result in input
	// order ({email, status, reason, send_id}, with Code filled in; Err is
	// not kept). It is nil while the call runs.
	Results []postroom.Result `json:"results,omitempty"`
}

// Status returns the progress of the call with id callID: counts by
// status while it runs, and every recipient's result once it is done.
// An unknown id is ErrNotFound.
func (o *Outbox) Status(ctx context.Context, callID string) (*CallStatus, error) {
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
	s := &CallStatus{CallID: callID, Counts: map[postroom.Status]int{}}
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
		return s, nil
	}
	s.Done = true
	rows, err = o.pool.Query(ctx, `SELECT email, status, code, reason, send_id FROM postroom_outbox_recipients
		WHERE call_id = $1 ORDER BY idx`, callID)
	if err != nil {
		return nil, fmt.Errorf("outbox: status: %w", err)
	}
	defer rows.Close()
	s.Results = make([]postroom.Result, 0, total)
	for rows.Next() {
		var r postroom.Result
		var status, code string
		if err := rows.Scan(&r.Email, &status, &code, &r.Reason, &r.SendID); err != nil {
			return nil, fmt.Errorf("outbox: status: %w", err)
		}
		r.Status, r.Code = postroom.Status(status), postroom.ReasonCode(code)
		s.Results = append(s.Results, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("outbox: status: %w", err)
	}
	return s, nil
}
