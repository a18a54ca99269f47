package outbox_test

import (
	"errors"
	"testing"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/testkit/outboxenv"
	"github.com/postroom/postroom/outbox"
)

// TestDeleteBefore deletes a call that started before the time given,
// with its chunks and its recipients' rows (which no foreign key
// cascades to), and leaves a later call as it was.
func TestDeleteBefore(t *testing.T) {
	engines(t, func(t *testing.T, eng outboxenv.Engine) {
		var clk clock
		e := newEnv(t, setup{engine: eng, noWork: true, opts: outbox.Options{Now: clk.now}})
		withInvalid := func(prefix string) *postroom.Call {
			call := newCall(prefix, 3)
			call.Recipients[1].Email = "not an address" // a row at Enqueue
			return call
		}
		old := e.enqueue(t, postroom.OpSend, withInvalid("old"), outbox.EnqueueOptions{})
		clk.advance(2 * time.Hour)
		kept := e.enqueue(t, postroom.OpSend, withInvalid("kept"), outbox.EnqueueOptions{})

		n, err := e.ob.DeleteBefore(t.Context(), clk.now().Add(-time.Hour))
		if err != nil || n != 1 {
			t.Fatalf("DeleteBefore: %d, %v; want 1 call", n, err)
		}
		if _, err := e.ob.Status(t.Context(), old); !errors.Is(err, outbox.ErrNotFound) {
			t.Errorf("deleted call's Status: %v, want ErrNotFound", err)
		}
		rows := func(id string) (n int) {
			t.Helper()
			if err := e.db.QueryRow(t.Context(), `SELECT (SELECT count(*) FROM postroom_outbox_results WHERE call_id = $1)
			+ (SELECT count(*) FROM postroom_outbox_chunks WHERE call_id = $1)`, id).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		if got := rows(old); got != 0 {
			t.Errorf("deleted call: %d rows left, want none", got)
		}
		if got := rows(kept); got != 2 { // its chunk and its invalid recipient
			t.Errorf("later call: %d rows, want 2", got)
		}
		s, err := e.ob.Status(t.Context(), kept)
		if err != nil || s.Counts[postroom.StatusInvalid] != 1 || s.Counts[postroom.StatusQueued] != 2 {
			t.Errorf("later call: %+v, %v; want 1 invalid and 2 queued", s, err)
		}
	})
}
