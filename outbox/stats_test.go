package outbox_test

import (
	"testing"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/testkit/outboxenv"
	"github.com/postroom/postroom/outbox"
)

func TestStatsEmpty(t *testing.T) {
	t.Parallel()
	engines(t, func(t *testing.T, eng outboxenv.Engine) {
		e := newEnv(t, setup{engine: eng, noWork: true})
		s, err := e.ob.Stats(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if s.Waiting != 0 || !s.Oldest.IsZero() {
			t.Errorf("stats of an empty outbox %+v, want nothing waiting", s)
		}
	})
}

func TestStatsWaitingThenDone(t *testing.T) {
	t.Parallel()
	engines(t, func(t *testing.T, eng outboxenv.Engine) {
		e := newEnv(t, setup{engine: eng, noWork: true, opts: outbox.Options{JobSize: 2}})
		before := time.Now().Add(-time.Second)
		first := e.enqueue(t, postroom.OpSend, newCall("stats", 3), outbox.EnqueueOptions{})
		e.enqueue(t, postroom.OpSend, newCall("stats", 2), outbox.EnqueueOptions{})
		s, err := e.ob.Stats(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if s.Waiting != 5 {
			t.Errorf("Waiting %d, want 5 (two calls of 3 and 2, none worked)", s.Waiting)
		}
		if s.Oldest.Before(before) || s.Oldest.After(time.Now()) {
			t.Errorf("Oldest %v, want the first call's enqueue time (after %v)", s.Oldest, before)
		}

		// Cancelling the first call gives its recipients final results: only
		// the second one waits then, and it is the oldest.
		if _, err := e.ob.Cancel(t.Context(), first, "test"); err != nil {
			t.Fatal(err)
		}
		s2, err := e.ob.Stats(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if s2.Waiting != 2 || !s2.Oldest.After(s.Oldest) {
			t.Errorf("after cancelling the first call %+v, want 2 waiting, the oldest newer than %v", s2, s.Oldest)
		}

		// Worked to the end, nothing waits.
		startClient(t, e.ob)
		waitJobsEnded(t, e.db)
		s3, err := e.ob.Stats(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if s3.Waiting != 0 || !s3.Oldest.IsZero() {
			t.Errorf("stats once worked %+v, want nothing waiting", s3)
		}
	})
}
