package outboxtest_test

import (
	"sync"
	"testing"

	"errors"

	"go.uber.org/goleak"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/testkit/outboxenv"
	"github.com/postroom/postroom/internal/testkit/pgtest"
	"github.com/postroom/postroom/outbox"
	"github.com/postroom/postroom/outbox/outboxtest"
	"github.com/postroom/postroom/postroomtest"
	"github.com/postroom/postroom/sqldb"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(pgtest.Main(m)) }

// setup is an outbox on a fresh migrated database whose Mailer hands its
// messages to rec.
func setup(t *testing.T, eng outboxenv.Engine, rec *postroomtest.Recorder) (*outbox.Outbox, sqldb.DB) {
	t.Helper()
	pool := eng.Open(t)
	m, err := postroom.New(rec, postroom.Options{Auth: postroom.NoAuth{}})
	if err != nil {
		t.Fatal(err)
	}
	ob, err := outbox.New(m, pool, outbox.Options{JobSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	return ob, pool
}

func receipt(order string, emails ...string) *postroom.Call {
	c := &postroom.Call{Message: postroom.Message{FromEmail: "shop@example.com", Subject: "Your order {{order}}", Text: "Order {{order}}"}}
	for _, e := range emails {
		c.Recipients = append(c.Recipients, postroom.Recipient{Email: e, Params: postroom.Params{"order": order}})
	}
	return c
}

// TestEnqueuedAndRunJobs: Enqueued shows the calls of its own transaction
// only, recipients included across jobs; after commit, RunJobs sends
// every recipient through the real Worker, retrying a deferral at once.
func TestEnqueuedAndRunJobs(t *testing.T) {
	for _, eng := range outboxenv.Engines() {
		t.Run(eng.Name, func(t *testing.T) { testEnqueuedAndRunJobs(t, eng) })
	}
}

func testEnqueuedAndRunJobs(t *testing.T, eng outboxenv.Engine) {
	rec := postroomtest.NewRecorder()
	var mu sync.Mutex
	deferred := map[string]bool{}
	rec.Fail = func(env *postroom.Envelope) error {
		mu.Lock()
		defer mu.Unlock()
		if env.To[0] == "greylisted@example.com" && !deferred[env.To[0]] {
			deferred[env.To[0]] = true
			return &postroom.DeliveryError{Code: 451, Enhanced: "4.7.1", Text: "greylisted"}
		}
		return nil
	}
	ob, pool := setup(t, eng, rec)
	ctx := t.Context()

	// Another transaction's call, committed: not this one's.
	if err := sqldb.BeginFunc(ctx, pool, func(tx sqldb.Tx) error {
		_, err := ob.Enqueue(ctx, tx, postroom.OpSend, receipt("999", "other@example.com"), outbox.EnqueueOptions{})
		return err
	}); err != nil {
		t.Fatal(err)
	}

	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	id1, err := ob.Enqueue(ctx, tx, postroom.OpSend, receipt("1001", "ann@example.com", "bob@example.com", "greylisted@example.com"), outbox.EnqueueOptions{})
	if err != nil {
		t.Fatal(err)
	}
	id2, err := ob.Enqueue(ctx, tx, postroom.OpSend, receipt("1002", "cy@example.com"), outbox.EnqueueOptions{})
	if err != nil {
		t.Fatal(err)
	}
	calls, err := outboxtest.Enqueued(ctx, tx)
	if pool.Engine() == sqldb.SQLite {
		if !errors.Is(err, outboxtest.ErrPostgresOnly) {
			t.Errorf("Enqueued on SQLite: %v, want ErrPostgresOnly", err)
		}
	} else {
		checkEnqueued(t, calls, err, id1, id2)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}

	if runs := outboxtest.RunJobs(ctx, t, ob, pool); runs < 4 {
		t.Errorf("%d job runs, want at least 4 (three jobs and a retry)", runs)
	}
	for _, id := range []string{id1, id2} {
		st, err := ob.Status(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if st.State != postroom.CallDone {
			t.Fatalf("call %s not done: %+v", id, st)
		}
		for _, r := range st.Results {
			if r.Status != postroom.StatusSent {
				t.Errorf("call %s: %s %s %s", id, r.Email, r.Status, r.Reason)
			}
		}
	}
	if n := len(rec.Messages(t)); n != 5 {
		t.Errorf("%d messages handed over, want 5", n)
	}
	rec.To(t, "greylisted@example.com").Check(t, postroomtest.Want{Subject: "Your order 1001"})
	if runs := outboxtest.RunJobs(ctx, t, ob, pool); runs != 0 {
		t.Errorf("a second RunJobs made %d runs, want 0", runs)
	}
}

// checkEnqueued checks Enqueued's answer: the calls id1 and id2, as
// stored.
func checkEnqueued(t *testing.T, calls []outboxtest.Call, err error, id1, id2 string) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) != 2 || calls[0].ID != id1 || calls[1].ID != id2 {
		t.Fatalf("Enqueued: %d calls %+v, want %s and %s", len(calls), calls, id1, id2)
	}
	c := calls[0]
	if c.Operation != postroom.OpSend || c.Call.Message.Subject != "Your order {{order}}" || len(c.Call.Recipients) != 3 ||
		c.Call.Recipients[2].Email != "greylisted@example.com" || c.Call.Recipients[2].Params["order"] != "1001" {
		t.Errorf("first call as stored: %+v", c.Call)
	}
}
