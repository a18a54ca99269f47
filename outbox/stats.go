package outbox

// The queue as a whole, for gauges: how many recipients wait and since
// when.

import (
	"context"
	"fmt"
	"time"
)

// QueueStats is the outbox's queue at one moment, as Stats reads it.
type QueueStats struct {
	// Waiting is the number of recipients without a final result whose
	// job is still to run, or running: not tried yet, being sent, or
	// deferred and waiting for their retry.
	Waiting int
	// Oldest is when the call of the oldest waiting recipient was
	// enqueued; the zero time when none waits.
	Oldest time.Time
}

// Stats returns the number of recipients waiting and when the oldest of
// them was enqueued, for a queue-depth and an age gauge. It reads, in
// one query, the outbox's River jobs that are not finished (available,
// scheduled, retryable, running or pending: River's index on state finds
// them), their chunks and the final results of those chunks, so its cost
// follows the work waiting, not the calls kept. A recipient whose job
// ended without giving it a result (a job cancelled through River
// directly) is not counted: no run will come for it; Waiting lists it.
func (o *Outbox) Stats(ctx context.Context) (QueueStats, error) {
	var s QueueStats
	var oldest *time.Time
	err := o.db.QueryRow(ctx, dialect(o.db, `SELECT coalesce(sum(w.n), 0), min(c.started_at)
		FROM (SELECT ch.call_id, ch.count - (SELECT count(*) FROM postroom_outbox_results f, unnest(f.status) AS u(status)
		        WHERE f.call_id = ch.call_id AND f.first = ch.first
		          AND u.status NOT IN ('', 'reserved', 'deferred')) AS n
		      FROM river_job j
		      JOIN postroom_outbox_chunks ch
		        ON ch.call_id = j.args->>'call_id' AND ch.first = (j.args->>'first')::integer
		      WHERE j.kind = $1
		        AND j.state IN ('available', 'scheduled', 'retryable', 'running', 'pending')) w
		JOIN postroom_outbox_calls c ON c.id = w.call_id
		WHERE w.n > 0`, `SELECT coalesce(sum(w.n), 0), min(c.started_at)
		FROM (SELECT ch.call_id, ch.count - (SELECT count(*) FROM postroom_outbox_results f, json_each(f.status) AS u
		        WHERE f.call_id = ch.call_id AND f.first = ch.first
		          AND u.value NOT IN ('', 'reserved', 'deferred')) AS n
		      FROM river_job j
		      JOIN postroom_outbox_chunks ch
		        ON ch.call_id = j.args ->> '$.call_id' AND ch.first = j.args ->> '$.first'
		      WHERE j.kind = $1
		        AND j.state IN ('available', 'scheduled', 'retryable', 'running', 'pending')) w
		JOIN postroom_outbox_calls c ON c.id = w.call_id
		WHERE w.n > 0`), SendArgs{}.Kind()).Scan(&s.Waiting, &oldest)
	if err != nil {
		return QueueStats{}, fmt.Errorf("outbox: stats: %w", err)
	}
	if oldest != nil {
		s.Oldest = *oldest
	}
	return s, nil
}
