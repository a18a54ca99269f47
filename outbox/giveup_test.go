package outbox_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/testkit/outboxenv"
	"github.com/postroom/postroom/outbox"
	"github.com/postroom/postroom/templatestore"
)

// failingStore is a template store that cannot be reached: every run of
// a message.send_template job fails as a whole, with an error that is
// not the call's fault.
type failingStore struct{ calls atomic.Int64 }

var errStoreDown = errors.New("template store down")

func (s *failingStore) Template(context.Context, string, string) (string, error) {
	s.calls.Add(1)
	return "", errStoreDown
}

// transportNever is a transport that fails the test if a message
// reaches it.
func transportNever(t *testing.T) postroom.Transport {
	return postroom.TransportFunc(func(_ context.Context, env *postroom.Envelope) error {
		t.Errorf("a message to %v was handed over", env.To)
		return nil
	})
}

// runUntilEnded enqueues call as op into a fresh outbox with opts,
// checked by the Mailer enq, and works it with the Mailer work until
// River has no job left to run. It returns the call's status, which must
// be done: no recipient is left without a final result.
func runUntilEnded(t *testing.T, eng outboxenv.Engine, enq, work *postroom.Mailer, opts outbox.Options, op postroom.Operation, call *postroom.Call) *postroom.CallStatus {
	t.Helper()
	db, pool := openDB(t, eng)
	ob, err := outbox.New(enq, db, opts)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{db: db, pool: pool, ob: ob}
	id := e.enqueue(t, op, call, outbox.EnqueueOptions{})
	worker, err := outbox.New(work, db, opts)
	if err != nil {
		t.Fatal(err)
	}
	startClient(t, worker)
	waitJobsEnded(t, db)
	return statusDone(t, e, id, call)
}

// statusDone returns call id's status and checks it is done: a final
// result for every recipient, in input order.
func statusDone(t *testing.T, e *env, id string, call *postroom.Call) *postroom.CallStatus {
	t.Helper()
	s, err := e.ob.Status(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if s.State != postroom.CallDone {
		t.Fatalf("River has no job left, and the call is not done: %v", s.Counts)
	}
	if len(s.Results) != len(call.Recipients) {
		t.Fatalf("%d results for %d recipients", len(s.Results), len(call.Recipients))
	}
	for i, r := range s.Results {
		if r.Email != call.Recipients[i].Email {
			t.Errorf("result %d is %q, want %q (input order)", i, r.Email, call.Recipients[i].Email)
		}
	}
	return s
}

// jobStates counts the River jobs by state.
func jobStates(t *testing.T, e *env) map[string]int {
	t.Helper()
	rows, err := e.db.Query(t.Context(), `SELECT state FROM river_job`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := map[string]int{}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		n[s]++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return n
}

// wantGaveUp checks that r is rejected, ReasonGaveUp, with a reason that
// says why (contains why) and, when last is not empty, gives the last
// attempt's reason.
func wantGaveUp(t *testing.T, i int, r postroom.Result, why, last string) {
	t.Helper()
	if r.Status != postroom.StatusRejected || r.Code != outbox.ReasonGaveUp || !strings.HasPrefix(r.Reason, string(outbox.ReasonGaveUp)+": ") {
		t.Errorf("recipient %d: %+v, want rejected, gave-up", i, r)
		return
	}
	if !strings.Contains(r.Reason, why) {
		t.Errorf("recipient %d: reason %q does not say %q", i, r.Reason, why)
	}
	if has := strings.Contains(r.Reason, "; last attempt: "+last); last != "" && !has {
		t.Errorf("recipient %d: reason %q does not give the last attempt (%s)", i, r.Reason, last)
	}
	if last == "" && strings.Contains(r.Reason, "last attempt") {
		t.Errorf("recipient %d: reason %q names a last attempt it never had", i, r.Reason)
	}
}

// TestGiveUpAfterPanics: a transport that panics on every message makes
// every run of the job panic. After MaxAttempts runs the job gives up:
// the message each run handed over (one at a time) and then panicked
// over is unknown, interrupted, and every other recipient, never handed
// over, rejected, gave-up; and River's job ends completed, not discarded.
func TestGiveUpAfterPanics(t *testing.T) {
	t.Parallel()
	engines(t, func(t *testing.T, eng outboxenv.Engine) {
		for _, attempts := range []int{1, 2} {
			t.Run(fmt.Sprintf("MaxAttempts=%d", attempts), func(t *testing.T) {
				var handed atomic.Int64
				m, err := postroom.New(postroom.TransportFunc(func(context.Context, *postroom.Envelope) error {
					handed.Add(1)
					panic("a transport bug")
					// One at a time: with more, the Mailer's other workers wait
					// for the bytes in flight that the panicking one never gives
					// back, until the job's timeout.
				}), postroom.Options{Auth: postroom.NoAuth{}, Concurrency: 1})
				if err != nil {
					t.Fatal(err)
				}
				const batch = 3
				call := newCall("panic", 10)
				opts := outbox.Options{JobSize: 10, BatchSize: batch, MaxAttempts: attempts}
				s := runUntilEnded(t, eng, m, m, opts, postroom.OpSend, call)
				interrupted := attempts // one message handed over per run
				for i, r := range s.Results {
					if i < interrupted {
						if r.Status != postroom.StatusUnknown || r.Code != postroom.ReasonInterrupted {
							t.Errorf("recipient %d: %+v, want unknown, interrupted", i, r)
						}
						continue
					}
					wantGaveUp(t, i, r, fmt.Sprintf("after %d failed run", attempts), "")
				}
				if handed.Load() != int64(attempts) {
					t.Errorf("%d messages handed over, want one per run (%d)", handed.Load(), attempts)
				}
			})
		}
	})
}

// TestGiveUpAfterErrors: a template store that cannot be reached makes
// every run fail as a whole (an error returned to River, not a
// refusal of the call). After MaxAttempts runs every recipient is
// rejected, gave-up; those that a run tried give that try's reason.
func TestGiveUpAfterErrors(t *testing.T) {
	t.Parallel()
	engines(t, func(t *testing.T, eng outboxenv.Engine) {
		templates := templatestore.NewMemory()
		if err := templates.Put("acct", "shipped", "Your order {{n}} has shipped."); err != nil {
			t.Fatal(err)
		}
		enq, err := postroom.New(transportNever(t), postroom.Options{Auth: postroom.NoAuth{}, Templates: templates})
		if err != nil {
			t.Fatal(err)
		}
		var store failingStore
		work, err := postroom.New(transportNever(t), postroom.Options{Auth: postroom.NoAuth{}, Templates: &store})
		if err != nil {
			t.Fatal(err)
		}
		call := newCall("error", 7)
		call.Message.Text, call.Message.TextTemplateID = "", "shipped"
		s := runUntilEnded(t, eng, enq, work, outbox.Options{JobSize: 10, BatchSize: 3, MaxAttempts: 3}, postroom.OpSendTemplate, call)
		for i, r := range s.Results {
			last := ""
			if i < 3 {
				last = string(postroom.ReasonNotSent)
			}
			wantGaveUp(t, i, r, "after 3 failed runs", last)
		}
		if got := store.calls.Load(); got != 3 {
			t.Errorf("the store was asked %d times, want once per run (3)", got)
		}
	})
}

// TestGiveUpUnreadable: a job whose call's stored rows cannot be read is
// cancelled, and gives its recipients up first.
func TestGiveUpUnreadable(t *testing.T) {
	t.Parallel()
	engines(t, func(t *testing.T, eng outboxenv.Engine) {
		tests := []struct {
			name, sql, why string
			emails         bool // the recipients' emails can still be read
		}{
			{"call", `UPDATE postroom_outbox_calls SET body = 'not json'`, "the stored call could not be read", true},
			{"recipients", `UPDATE postroom_outbox_chunks SET recipients = 'not json'`, "the stored recipients could not be read", false},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				e := newEnv(t, setup{engine: eng, noWork: true})
				call := newCall("unreadable", 4)
				id := e.enqueue(t, postroom.OpSend, call, outbox.EnqueueOptions{})
				if _, err := e.db.Exec(t.Context(), tt.sql); err != nil {
					t.Fatal(err)
				}
				startClient(t, e.ob)
				waitJobsEnded(t, e.db)
				s, err := e.ob.Status(t.Context(), id)
				if err != nil {
					t.Fatal(err)
				}
				if s.State != postroom.CallDone || len(s.Results) != 4 {
					t.Fatalf("River has no job left, and the call is not done: %+v", s)
				}
				for i, r := range s.Results {
					wantGaveUp(t, i, r, tt.why, "")
					want := ""
					if tt.emails {
						want = call.Recipients[i].Email
					}
					if r.Email != want {
						t.Errorf("recipient %d: email %q, want %q", i, r.Email, want)
					}
				}
				if n := jobStates(t, e); n["cancelled"] != 1 {
					t.Errorf("jobs %v, want one cancelled", n)
				}
				if n := len(e.srv.Messages()); n != 0 {
					t.Errorf("the server holds %d messages, want none", n)
				}
			})
		}
	})
}

// TestGiveUpCancelled: a job cancelled through River's Client.JobCancel
// while it runs gives its recipients up: the messages it was handing
// over (the transport saw the cancellation first: their last attempt was
// cancelled) and the rest.
func TestGiveUpCancelled(t *testing.T) {
	t.Parallel()
	engines(t, func(t *testing.T, eng outboxenv.Engine) {
		started := make(chan struct{})
		var once sync.Once
		m, err := postroom.New(postroom.TransportFunc(func(ctx context.Context, _ *postroom.Envelope) error {
			once.Do(func() { close(started) })
			<-ctx.Done()
			return ctx.Err()
		}), postroom.Options{Auth: postroom.NoAuth{}})
		if err != nil {
			t.Fatal(err)
		}
		db, pool := openDB(t, eng)
		ob, err := outbox.New(m, db, outbox.Options{JobSize: 10, BatchSize: 3})
		if err != nil {
			t.Fatal(err)
		}
		e := &env{db: db, pool: pool, ob: ob}
		call := newCall("cancel", 8)
		id := e.enqueue(t, postroom.OpSend, call, outbox.EnqueueOptions{})
		client := startClient(t, ob)
		select {
		case <-started:
		case <-t.Context().Done():
			t.Fatal("the job never handed a message over")
		}
		var jobID int64
		if err := db.QueryRow(t.Context(), `SELECT id FROM river_job`).Scan(&jobID); err != nil {
			t.Fatal(err)
		}
		if err := client.JobCancel(t.Context(), jobID); err != nil {
			t.Fatal(err)
		}
		waitJobsEnded(t, db)
		s := statusDone(t, e, id, call)
		for i, r := range s.Results {
			last := ""
			if i == 0 || strings.Contains(r.Reason, "last attempt") {
				// The first was handed over; the others of its batch may
				// have been, or kept back when the job was cancelled.
				last = string(postroom.ReasonCanceled)
			}
			if i >= 3 && last != "" {
				t.Errorf("recipient %d, after the batch, was tried: %+v", i, r)
			}
			wantGaveUp(t, i, r, "its job was cancelled", last)
		}
		if n := jobStates(t, e); n["cancelled"] != 1 {
			t.Errorf("jobs %v, want one cancelled", n)
		}
	})
}

// TestMaxAttemptsOption checks New's bounds of Options.MaxAttempts and
// the River attempts Enqueue gives a job: one more, for giving up.
func TestMaxAttemptsOption(t *testing.T) {
	t.Parallel()
	engines(t, func(t *testing.T, eng outboxenv.Engine) {
		m, err := postroom.New(transportNever(t), postroom.Options{Auth: postroom.NoAuth{}})
		if err != nil {
			t.Fatal(err)
		}
		db, pool := openDB(t, eng)
		for _, tt := range []struct {
			n  int
			ok bool
		}{{0, true}, {1, true}, {32766, true}, {-1, false}, {32767, false}} {
			_, err := outbox.New(m, db, outbox.Options{MaxAttempts: tt.n})
			if (err == nil) != tt.ok {
				t.Errorf("MaxAttempts %d: %v", tt.n, err)
			}
		}
		// Enqueue gives the jobs one attempt more than MaxAttempts.
		ob, err := outbox.New(m, db, outbox.Options{MaxAttempts: 7})
		if err != nil {
			t.Fatal(err)
		}
		(&env{db: db, pool: pool, ob: ob}).enqueue(t, postroom.OpSend, newCall("max", 1), outbox.EnqueueOptions{})
		var got int
		if err := db.QueryRow(t.Context(), `SELECT max_attempts FROM river_job`).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != 8 {
			t.Errorf("the job's max_attempts is %d, want 8", got)
		}
	})
}
