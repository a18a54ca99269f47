package outbox

import (
	"context"
	"fmt"
	"time"
)

// DeleteBefore deletes the calls that started before t, with their
// recipients' results, and returns how many it deleted. A job of a
// deleted call that is still queued is cancelled when it runs. It is the
// application's to call, periodically: nothing in this package starts a
// goroutine.
func (o *Outbox) DeleteBefore(ctx context.Context, t time.Time) (int, error) {
	tx, err := o.db.Begin(ctx)
	if err != nil {
		return 0, fmt.Errorf("outbox: DeleteBefore: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) // after Commit, a no-op
	// The calls first, with their chunks (ON DELETE CASCADE): a chunk's
	// delete waits for the job writes that hold it (FOR SHARE), and no
	// write after it finds the chunk. Then, in a statement of its own (a
	// snapshot that sees what those writes committed), the jobs' writes,
	// which have no foreign key to cascade through (see
	// sql/003_results_log.sql).
	rows, err := tx.Query(ctx, `DELETE FROM postroom_outbox_calls WHERE started_at < $1 RETURNING id`, t)
	if err != nil {
		return 0, fmt.Errorf("outbox: DeleteBefore: %w", err)
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return 0, fmt.Errorf("outbox: DeleteBefore: %w", err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		rows.Close()
		return 0, fmt.Errorf("outbox: DeleteBefore: %w", err)
	}
	if err := rows.Close(); err != nil {
		return 0, fmt.Errorf("outbox: DeleteBefore: %w", err)
	}
	if len(ids) == 0 {
		return 0, nil
	}
	if _, err := tx.Exec(ctx, dialect(tx, `DELETE FROM postroom_outbox_results WHERE call_id = ANY($1)`,
		`DELETE FROM postroom_outbox_results WHERE call_id IN (SELECT value FROM json_each($1))`), ids); err != nil {
		return 0, fmt.Errorf("outbox: DeleteBefore: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return 0, fmt.Errorf("outbox: DeleteBefore: %w", err)
	}
	return len(ids), nil
}
