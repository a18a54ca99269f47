package outbox_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/testkit/outboxenv"
	"github.com/postroom/postroom/internal/testkit/smtptest"
	"github.com/postroom/postroom/outbox"
)

// greylist defers the first RCPT of the addresses for which pick is
// true, as a greylisting relay does.
func greylist(pick func(string) bool) func(smtptest.Command) smtptest.Fault {
	return func(c smtptest.Command) smtptest.Fault {
		if c.Stage == smtptest.Rcpt && c.Attempt == 1 && pick(c.Addr) {
			return smtptest.Fault{Code: 451, Enhanced: "4.7.1", Text: "greylisted"}
		}
		return smtptest.Fault{}
	}
}

// odd picks the addresses of odd index.
func odd(a string) bool {
	a = strings.TrimSuffix(a, "@example.org")
	return strings.ContainsAny(a[len(a)-1:], "13579")
}

// waitWaiting polls Waiting until n recipients are deferred with a next
// attempt, and returns them.
func waitWaiting(t *testing.T, ob *outbox.Outbox, id string, n int) []outbox.WaitingRecipient {
	t.Helper()
	for {
		w, err := ob.Waiting(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		ready := 0
		for _, r := range w {
			if r.State == outbox.WaitingDeferred && r.NextAttempt != nil {
				ready++
			}
		}
		if ready == n && len(w) == n {
			return w
		}
		select {
		case <-t.Context().Done():
			t.Fatalf("waiting %+v, want %d deferred", w, n)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func TestWaitingThenRetry(t *testing.T) {
	t.Parallel()
	engines(t, func(t *testing.T, eng outboxenv.Engine) {
		e := newEnv(t, setup{engine: eng,
			faults: greylist(odd),
			opts:   outbox.Options{JobSize: 4, Backoff: func(int) time.Duration { return time.Hour }},
		})
		call := newCall("wait", 8)
		id := e.enqueue(t, postroom.OpSend, call, outbox.EnqueueOptions{})
		w := waitWaiting(t, e.ob, id, 4)
		for k, r := range w {
			if r.Index != 2*k+1 || r.Email != addr("wait", 2*k+1) {
				t.Errorf("waiting[%d] is %d %s, want %d", k, r.Index, r.Email, 2*k+1)
			}
			if r.LastStatus != string(postroom.StatusDeferred) || r.LastCode != string(postroom.ReasonSoftBounce) ||
				!strings.Contains(r.LastReason, "451") || !strings.Contains(r.LastReason, "greylisted") {
				t.Errorf("waiting[%d] last attempt %q %q %q, want deferred, soft-bounce, the 451 reply", k, r.LastStatus, r.LastCode, r.LastReason)
			}
			if r.Attempts != 1 {
				t.Errorf("waiting[%d] attempts %d, want 1", k, r.Attempts)
			}
			if d := time.Until(*r.NextAttempt); d < 50*time.Minute || d > time.Hour {
				t.Errorf("waiting[%d] next attempt in %v, want about an hour", k, d)
			}
		}
		s, err := e.ob.Status(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		if s.Counts[postroom.StatusQueued] != 4 || s.Counts[postroom.StatusSent] != 4 {
			t.Errorf("counts %v, want 4 sent and 4 queued", s.Counts)
		}

		n, err := e.ob.Retry(t.Context(), id)
		if err != nil || n != 4 {
			t.Fatalf("Retry: %d, %v; want 4", n, err)
		}
		s = e.wait(t, id) // within the test's deadline, not the hour
		if s.Counts[postroom.StatusSent] != 8 {
			t.Errorf("counts %v, want all 8 sent", s.Counts)
		}
		smtptest.CheckLedger(t, e.srv, s.Results)
		if w, err := e.ob.Waiting(t.Context(), id); err != nil || len(w) != 0 {
			t.Errorf("waiting once done: %+v, %v", w, err)
		}
		if n, err := e.ob.Retry(t.Context(), id); err != nil || n != 0 {
			t.Errorf("Retry of a done call: %d, %v", n, err)
		}
	})
}

func TestRetryLeavesSendLater(t *testing.T) {
	t.Parallel()
	engines(t, func(t *testing.T, eng outboxenv.Engine) {
		e := newEnv(t, setup{engine: eng})
		id := e.enqueue(t, postroom.OpSend, newCall("later", 2), outbox.EnqueueOptions{At: time.Now().Add(time.Hour)})
		if n, err := e.ob.Retry(t.Context(), id); err != nil || n != 0 {
			t.Fatalf("Retry: %d, %v; want 0", n, err)
		}
		var state string
		if err := e.db.QueryRow(t.Context(), `SELECT state FROM river_job`).Scan(&state); err != nil || state != "scheduled" {
			t.Errorf("job %q, %v; want still scheduled", state, err)
		}
		w, err := e.ob.Waiting(t.Context(), id)
		if err != nil || len(w) != 2 || w[0].State != outbox.WaitingNew || w[0].NextAttempt == nil || time.Until(*w[0].NextAttempt) < 50*time.Minute {
			t.Errorf("waiting %+v, %v; want 2 new, next in an hour", w, err)
		}
	})
}

func TestNotFound(t *testing.T) {
	t.Parallel()
	engines(t, func(t *testing.T, eng outboxenv.Engine) {
		e := newEnv(t, setup{engine: eng, noWork: true})
		if _, err := e.ob.Waiting(t.Context(), "nope"); !errors.Is(err, outbox.ErrNotFound) {
			t.Errorf("Waiting: %v", err)
		}
		if _, err := e.ob.Cancel(t.Context(), "nope", ""); !errors.Is(err, outbox.ErrNotFound) {
			t.Errorf("Cancel: %v", err)
		}
		if _, err := e.ob.Retry(t.Context(), "nope"); !errors.Is(err, outbox.ErrNotFound) {
			t.Errorf("Retry: %v", err)
		}
	})
}

func TestCancelQueued(t *testing.T) {
	t.Parallel()
	engines(t, func(t *testing.T, eng outboxenv.Engine) {
		e := newEnv(t, setup{engine: eng, noWork: true, opts: outbox.Options{JobSize: 2}})
		id := e.enqueue(t, postroom.OpSend, newCall("cancel", 5), outbox.EnqueueOptions{})
		n, err := e.ob.Cancel(t.Context(), id, "wrong price")
		if err != nil || n != 5 {
			t.Fatalf("Cancel: %d, %v; want 5", n, err)
		}
		s, err := e.ob.Status(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		if s.State != postroom.CallDone || s.Counts[postroom.StatusRejected] != 5 {
			t.Fatalf("status %+v, want done, 5 rejected", s)
		}
		for k, r := range s.Results {
			if r.Email != addr("cancel", k) || r.Code != outbox.ReasonCallCanceled || r.Reason != "call-canceled: wrong price" {
				t.Errorf("result %d: %+v", k, r)
			}
		}
		var live int
		if err := e.db.QueryRow(t.Context(), `SELECT count(*) FILTER (WHERE state <> 'cancelled') FROM river_job`).Scan(&live); err != nil || live != 0 {
			t.Errorf("%d jobs not cancelled (%v)", live, err)
		}
		if n, err := e.ob.Cancel(t.Context(), id, "again"); err != nil || n != 0 {
			t.Errorf("second Cancel: %d, %v; want 0", n, err)
		}
	})
}

func TestCancelDeferred(t *testing.T) {
	t.Parallel()
	engines(t, func(t *testing.T, eng outboxenv.Engine) {
		e := newEnv(t, setup{engine: eng,
			faults: greylist(odd),
			opts:   outbox.Options{JobSize: 4, Backoff: func(int) time.Duration { return time.Hour }},
		})
		id := e.enqueue(t, postroom.OpSend, newCall("cdef", 6), outbox.EnqueueOptions{})
		waitWaiting(t, e.ob, id, 3)
		n, err := e.ob.Cancel(t.Context(), id, "")
		if err != nil || n != 3 {
			t.Fatalf("Cancel: %d, %v; want 3", n, err)
		}
		s := e.wait(t, id)
		smtptest.CheckLedger(t, e.srv, s.Results)
		for _, r := range s.Results {
			want := postroom.StatusSent
			if odd(r.Email) {
				want = postroom.StatusRejected
				if r.Code != outbox.ReasonCallCanceled || !strings.Contains(r.Reason, "; last attempt: ") || !strings.Contains(r.Reason, "greylisted") {
					t.Errorf("%s: %+v, want call-canceled with the last attempt", r.Email, r)
				}
			}
			if r.Status != want {
				t.Errorf("%s: %s, want %s", r.Email, r.Status, want)
			}
		}
		waitJobsEnded(t, e.db)
	})
}

// TestCancelInFlight cancels a call while a run of its job hands messages
// to a slow relay: the recipients the run had reserved get their outcome
// from the run, never call-canceled, the others are cancelled, and the
// relay's ledger agrees with every result.
func TestCancelInFlight(t *testing.T) {
	t.Parallel()
	engines(t, func(t *testing.T, eng outboxenv.Engine) {
		e := newEnv(t, setup{engine: eng,
			faults: func(c smtptest.Command) smtptest.Fault {
				if c.Stage == smtptest.EndOfData {
					return smtptest.Fault{Delay: 400 * time.Millisecond}
				}
				return smtptest.Fault{}
			},
			opts: outbox.Options{JobSize: 20, BatchSize: 2},
		})
		id := e.enqueue(t, postroom.OpSend, newCall("flight", 20), outbox.EnqueueOptions{})
		var reserved []int
		for len(reserved) == 0 {
			rows, err := e.db.Query(t.Context(), `SELECT idx FROM postroom_outbox_recipients WHERE call_id = $1 AND status = 'reserved'`, id)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var i int
				if err := rows.Scan(&i); err != nil {
					t.Fatal(err)
				}
				reserved = append(reserved, i)
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			rows.Close()
			select {
			case <-t.Context().Done():
				t.Fatal("no recipient reserved")
			case <-time.After(5 * time.Millisecond):
			}
		}
		n, err := e.ob.Cancel(t.Context(), id, "stop")
		if err != nil {
			t.Fatal(err)
		}
		s := e.wait(t, id)
		waitJobsEnded(t, e.db)
		smtptest.CheckLedger(t, e.srv, s.Results)
		canceled := 0
		for _, r := range s.Results {
			if r.Code == outbox.ReasonCallCanceled {
				canceled++
			}
		}
		if canceled != n || n == 0 || n > 20-len(reserved) {
			t.Errorf("Cancel settled %d, results say %d call-canceled, %d were reserved", n, canceled, len(reserved))
		}
		for _, i := range reserved {
			if r := s.Results[i]; r.Code == outbox.ReasonCallCanceled {
				t.Errorf("recipient %d, reserved by the running job, became %+v", i, r)
			}
		}
		t.Logf("%d reserved at the cancel: %v", len(reserved), func() (out []string) {
			for _, i := range reserved {
				out = append(out, string(s.Results[i].Status)+"/"+string(s.Results[i].Code))
			}
			return out
		}())
	})
}

// TestSteerNULParam steers a call whose recipient's params hold a NUL
// character, which PostgreSQL's jsonb refuses: the stored recipients are
// decoded in Go.
func TestSteerNULParam(t *testing.T) {
	t.Parallel()
	engines(t, func(t *testing.T, eng outboxenv.Engine) {
		e := newEnv(t, setup{engine: eng, noWork: true})
		call := newCall("nul", 2)
		call.Recipients[1].Params = map[string]any{"n": "a\x00b"}
		id := e.enqueue(t, postroom.OpSend, call, outbox.EnqueueOptions{})
		w, err := e.ob.Waiting(t.Context(), id)
		if err != nil || len(w) != 2 || w[1].Email != addr("nul", 1) || w[1].State != outbox.WaitingNew {
			t.Fatalf("Waiting: %+v, %v", w, err)
		}
		if n, err := e.ob.Cancel(t.Context(), id, ""); err != nil || n != 2 {
			t.Fatalf("Cancel: %d, %v", n, err)
		}
	})
}
