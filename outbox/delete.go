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
	tag, err := o.pool.Exec(ctx, `DELETE FROM postroom_outbox_calls WHERE started_at < $1`, t)
	if err != nil {
		return 0, fmt.Errorf("outbox: DeleteBefore: %w", err)
	}
	return int(tag.RowsAffected()), nil
}
