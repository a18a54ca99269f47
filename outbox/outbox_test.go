package outbox_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/testkit/outboxenv"
	"github.com/postroom/postroom/internal/testkit/smtptest"
	"github.com/postroom/postroom/outbox"
	"github.com/postroom/postroom/sqldb"
)

// checkResults checks a done call's results against the server's ledger
// and the call: one per recipient, in input order, each final.
func checkResults(t *testing.T, e *env, s *postroom.CallStatus, call *postroom.Call) {
	t.Helper()
	if len(s.Results) != len(call.Recipients) {
		t.Fatalf("%d results for %d recipients", len(s.Results), len(call.Recipients))
	}
	for i, r := range s.Results {
		if r.Email != call.Recipients[i].Email {
			t.Fatalf("result %d is %s, want %s (input order)", i, r.Email, call.Recipients[i].Email)
		}
		if r.Status == postroom.StatusQueued || r.Status == "" || r.Status == postroom.StatusDeferred {
			t.Errorf("%s: status %q is not final", r.Email, r.Status)
		}
	}
	// The ledger's oracle knows a recipient by address: a duplicate's
	// result (invalid, nothing sent) is left to the caller's checks.
	var once []postroom.Result
	for _, r := range s.Results {
		if r.Code != postroom.ReasonDuplicate {
			once = append(once, r)
		}
	}
	smtptest.CheckLedger(t, e.srv, once)
}

func TestEnqueueDeliversOnce(t *testing.T) {
	t.Parallel()
	engines(t, func(t *testing.T, eng outboxenv.Engine) {
		e := newEnv(t, setup{engine: eng, opts: outbox.Options{JobSize: 20, BatchSize: 7}})
		call := newCall("once", 50)
		// A duplicate in another job than its first occurrence, and a bad
		// address: invalid at enqueue, never sent.
		call.Recipients[45].Email = call.Recipients[3].Email
		call.Recipients[30].Email = "not an address"
		id := e.enqueue(t, postroom.OpSend, call, outbox.EnqueueOptions{})
		s := e.wait(t, id)
		checkResults(t, e, s, call)
		if s.Counts[postroom.StatusSent] != 48 || s.Counts[postroom.StatusInvalid] != 2 {
			t.Errorf("counts %v, want 48 sent and 2 invalid", s.Counts)
		}
		if r := s.Results[45]; r.Code != postroom.ReasonDuplicate {
			t.Errorf("recipient 45: %+v, want a duplicate", r)
		}
		if r := s.Results[30]; r.Code != postroom.ReasonInvalidEmail {
			t.Errorf("recipient 30: %+v, want invalid-email", r)
		}
		for i, r := range s.Results {
			if r.Status == postroom.StatusSent && len(r.SendID) != 32 {
				t.Errorf("recipient %d: send id %q", i, r.SendID)
			}
		}
	})
}

func TestRollbackSendsNothing(t *testing.T) {
	t.Parallel()
	engines(t, func(t *testing.T, eng outboxenv.Engine) {
		e := newEnv(t, setup{engine: eng})
		tx, err := e.db.Begin(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		rolled, err := e.ob.Enqueue(t.Context(), tx, postroom.OpSend, newCall("rolled", 10), outbox.EnqueueOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := tx.Rollback(t.Context()); err != nil {
			t.Fatal(err)
		}
		// A call enqueued after it and done shows the workers have run.
		later := newCall("later", 3)
		s := e.wait(t, e.enqueue(t, postroom.OpSend, later, outbox.EnqueueOptions{}))
		checkResults(t, e, s, later) // fails on a message to any rolled-* address
		if _, err := e.ob.Status(t.Context(), rolled); !errors.Is(err, outbox.ErrNotFound) {
			t.Errorf("Status of the rolled-back call: %v, want ErrNotFound", err)
		}
	})
}

func TestRefusedAtEnqueue(t *testing.T) {
	t.Parallel()
	engines(t, func(t *testing.T, eng outboxenv.Engine) {
		e := newEnv(t, setup{engine: eng, auth: postroom.StaticKeys{"acct": {"k"}}, noWork: true})
		m := smtpMailer(t, e.srv.Addr(), postroom.StaticKeys{"acct": {"k"}})
		tests := []struct {
			name string
			edit func(c *postroom.Call)
		}{
			{"wrong key", func(c *postroom.Call) { c.Key = "nope" }},
			{"no recipients", func(c *postroom.Call) { c.Recipients = nil }},
			{"bad from", func(c *postroom.Call) { c.Message.FromEmail = "not an address" }},
			{"bad template", func(c *postroom.Call) { c.Message.Subject = "{{#if}}" }},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				call := newCall("refused", 2)
				tt.edit(call)
				_, sendErr := m.Send(t.Context(), call)
				if sendErr == nil {
					t.Fatal("Send accepted the call")
				}
				tx, err := e.db.Begin(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				defer tx.Rollback(context.WithoutCancel(t.Context()))
				_, err = e.ob.Enqueue(t.Context(), tx, postroom.OpSend, call, outbox.EnqueueOptions{})
				sameError(t, err, sendErr)
				// Nothing entered the queue, and tx is still usable.
				var jobs int
				if err := tx.QueryRow(t.Context(), `SELECT count(*) FROM river_job`).Scan(&jobs); err != nil {
					t.Fatal(err)
				}
				if jobs != 0 {
					t.Errorf("%d jobs inserted", jobs)
				}
			})
		}
	})
}

// sameError checks that got is the error Send gave: the same sentinels
// and the same validation fields.
func sameError(t *testing.T, got, want error) {
	t.Helper()
	if got == nil {
		t.Fatalf("Enqueue accepted the call; Send said %v", want)
	}
	for _, s := range []error{postroom.ErrUnauthorized, postroom.ErrNoRecipients, postroom.ErrTooManyRecipients} {
		if errors.Is(got, s) != errors.Is(want, s) {
			t.Errorf("errors.Is(%v): Enqueue %v, Send %v", s, errors.Is(got, s), errors.Is(want, s))
		}
	}
	var gv, wv *postroom.ValidationError
	if errors.As(got, &gv) != errors.As(want, &wv) {
		t.Fatalf("ValidationError: Enqueue %v, Send %v", got, want)
	}
	if gv != nil && (gv.Field != wv.Field || gv.Reason != wv.Reason) {
		t.Errorf("Enqueue: %+v, Send: %+v", gv, wv)
	}
}

func TestDeferredRetried(t *testing.T) {
	t.Parallel()
	engines(t, func(t *testing.T, eng outboxenv.Engine) {
		deferred := func(a string) bool { return strings.HasSuffix(strings.TrimSuffix(a, "@example.org"), "3") }
		e := newEnv(t, setup{engine: eng,
			faults: deferFirst(deferred),
			opts:   outbox.Options{JobSize: 10, Backoff: func(int) time.Duration { return time.Millisecond }},
		})
		call := newCall("retry", 30)
		s := e.wait(t, e.enqueue(t, postroom.OpSend, call, outbox.EnqueueOptions{}))
		checkResults(t, e, s, call)
		if s.Counts[postroom.StatusSent] != 30 {
			t.Errorf("counts %v, want all 30 sent", s.Counts)
		}
		for _, r := range s.Results {
			if deferred(r.Email) && r.Status != postroom.StatusSent {
				t.Errorf("%s: %+v", r.Email, r)
			}
		}
	})
}

func TestExpired(t *testing.T) {
	t.Parallel()
	engines(t, func(t *testing.T, eng outboxenv.Engine) {
		var clk clock
		const never = "expire-1@example.org"
		e := newEnv(t, setup{engine: eng,
			faults: func(c smtptest.Command) smtptest.Fault {
				if c.Stage == smtptest.Rcpt && c.Addr == never {
					if c.Attempt == 2 {
						clk.advance(2 * time.Hour) // past MaxAge: no third attempt
					}
					return smtptest.Fault{Code: 451, Enhanced: "4.3.0", Text: "try again later"}
				}
				return smtptest.Fault{}
			},
			opts: outbox.Options{MaxAge: time.Hour, Now: clk.now, Backoff: func(int) time.Duration { return time.Millisecond }},
		})
		call := newCall("expire", 3)
		s := e.wait(t, e.enqueue(t, postroom.OpSend, call, outbox.EnqueueOptions{}))
		checkResults(t, e, s, call)
		r := s.Results[1]
		if r.Status != postroom.StatusRejected || r.Code != outbox.ReasonExpired || !strings.HasPrefix(r.Reason, "expired: ") {
			t.Errorf("%+v, want rejected, expired", r)
		}
		if !strings.Contains(r.Reason, "451") {
			t.Errorf("reason %q does not give the last reply", r.Reason)
		}
		if s.Counts[postroom.StatusSent] != 2 {
			t.Errorf("counts %v", s.Counts)
		}
	})
}

func TestIdempotencyKey(t *testing.T) {
	t.Parallel()
	engines(t, func(t *testing.T, eng outboxenv.Engine) {
		e := newEnv(t, setup{engine: eng})
		call := newCall("idem", 5)
		eo := outbox.EnqueueOptions{IdempotencyKey: "order-42"}
		first := e.enqueue(t, postroom.OpSend, call, eo)
		second := e.enqueue(t, postroom.OpSend, call, eo)
		if first != second {
			t.Errorf("same key: ids %s and %s", first, second)
		}
		other := newCall("idem", 6)
		err := sqldb.BeginFunc(t.Context(), e.db, func(tx sqldb.Tx) error {
			_, err := e.ob.Enqueue(t.Context(), tx, postroom.OpSend, other, eo)
			return err
		})
		if !errors.Is(err, outbox.ErrConflict) {
			t.Errorf("same key, another call: %v, want ErrConflict", err)
		}
		checkResults(t, e, e.wait(t, first), call) // each address accepted once
	})
}

func TestStatusWhileQueued(t *testing.T) {
	t.Parallel()
	engines(t, func(t *testing.T, eng outboxenv.Engine) {
		e := newEnv(t, setup{engine: eng, noWork: true})
		call := newCall("queued", 4)
		call.Recipients[2].Email = "bad"
		id := e.enqueue(t, postroom.OpSend, call, outbox.EnqueueOptions{})
		s, err := e.ob.Status(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		if s.State != postroom.CallRunning || s.Counts[postroom.StatusQueued] != 3 || s.Counts[postroom.StatusInvalid] != 1 || s.Results != nil {
			t.Errorf("%+v, want running: 3 queued and 1 invalid (refused at Enqueue)", s)
		}
	})
}

// TestRefusedWhenSent enqueues a call on an instance whose Mailer accepts
// its key and works it on one whose Mailer no longer does (a key revoked
// in between): every recipient ends invalid, not-sent, and nothing is
// sent.
func TestRefusedWhenSent(t *testing.T) {
	t.Parallel()
	engines(t, func(t *testing.T, eng outboxenv.Engine) {
		enq := newEnv(t, setup{engine: eng, noWork: true, opts: outbox.Options{JobSize: 2, BatchSize: 1}})
		call := newCall("revoked", 5)
		id := enq.enqueue(t, postroom.OpSend, call, outbox.EnqueueOptions{})

		ob, err := outbox.New(smtpMailer(t, enq.srv.Addr(), postroom.StaticKeys{"acct": {"another key"}}), enq.db, outbox.Options{})
		if err != nil {
			t.Fatal(err)
		}
		startClient(t, ob)
		s := waitDone(t, ob, id)
		checkResults(t, enq, s, call)
		for _, r := range s.Results {
			if r.Status != postroom.StatusInvalid || r.Code != postroom.ReasonNotSent || !strings.Contains(r.Reason, "unauthorized") {
				t.Errorf("%+v, want invalid, not-sent (unauthorized)", r)
			}
		}
	})
}

// TestSendLater checks that EnqueueOptions.At schedules the call's jobs
// (River's scheduled state, at that time) and starts the call's MaxAge
// from it.
func TestSendLater(t *testing.T) {
	t.Parallel()
	engines(t, func(t *testing.T, eng outboxenv.Engine) {
		e := newEnv(t, setup{engine: eng, noWork: true, opts: outbox.Options{JobSize: 2}})
		at := time.Now().Add(time.Hour).Truncate(time.Millisecond) // River's precision on SQLite
		id := e.enqueue(t, postroom.OpSend, newCall("later", 3), outbox.EnqueueOptions{At: at})
		rows, err := e.db.Query(t.Context(), `SELECT state, scheduled_at FROM river_job`)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for rows.Next() {
			var state string
			var when time.Time
			if err := rows.Scan(&state, &when); err != nil {
				t.Fatal(err)
			}
			if state != "scheduled" || !when.Equal(at) {
				t.Errorf("job %s at %v, want scheduled at %v", state, when, at)
			}
			n++
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		if n != 2 {
			t.Errorf("%d jobs, want 2", n)
		}
		var started time.Time
		if err := e.db.QueryRow(t.Context(), `SELECT started_at FROM postroom_outbox_calls WHERE id = $1`, id).Scan(&started); err != nil {
			t.Fatal(err)
		}
		if !started.Equal(at) {
			t.Errorf("call started at %v, want %v", started, at)
		}
	})
}
