package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/console"
	"github.com/postroom/postroom/internal/testkit/outboxenv"
	"github.com/postroom/postroom/internal/testkit/smtptest"
	"github.com/postroom/postroom/outbox"
	"github.com/postroom/postroom/sqldb/pgxdb"
)

var _ console.Calls = outbox.AccountCalls{}

// retryInAnHour is a River retry policy that leaves a deferred recipient
// waiting an hour: long enough that the test sees it waiting, and that
// only the console's retry tries it again.
type retryInAnHour struct{}

func (retryInAnHour) NextRetry(*rivertype.JobRow) time.Time { return time.Now().Add(time.Hour) }

// callsEnv is a console over a real outbox on PostgreSQL whose relay
// greylists Ann's first attempt.
type callsEnv struct {
	*fixture
	ob   *outbox.Outbox
	pool *pgxpool.Pool
}

func newCallsEnv(t *testing.T) *callsEnv {
	t.Helper()
	pool := outboxenv.NewPool(t)
	srv := smtptest.NewServer(t, smtptest.Options{DiscardData: true, Faults: func(c smtptest.Command) smtptest.Fault {
		if c.Stage == smtptest.Rcpt && c.Addr == ann && c.Attempt == 1 {
			return smtptest.Fault{Code: 451, Enhanced: "4.7.1", Text: "<ann@example.org>: greylisted, try again later"}
		}
		return smtptest.Fault{}
	}})
	ob, err := outbox.New(outboxenv.SMTPMailer(t, srv.Addr(), nil), pgxdb.New(pool), outbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	outboxenv.StartClient(t, ob, &river.Config{RetryPolicy: retryInAnHour{}})
	f := newFixture(t, func(o *console.Options) { o.Calls = ob.AccountCalls() })
	return &callsEnv{fixture: f, ob: ob, pool: pool}
}

// enqueue enqueues a password reset to the addresses for account, at
// send time at (zero: now).
func (e *callsEnv) enqueue(t *testing.T, acct string, at time.Time, to ...string) string {
	t.Helper()
	call := &postroom.Call{AccountID: acct, Message: postroom.Message{FromEmail: "no-reply@shop.example.com", Subject: "Reset your password", Text: "Follow the link."}}
	for _, a := range to {
		call.Recipients = append(call.Recipients, postroom.Recipient{Email: a})
	}
	return outboxenv.Enqueue(t, pgxdb.New(e.pool), e.ob, postroom.OpSend, call, outbox.EnqueueOptions{At: at})
}

// waitDeferred polls the call's waiting recipients until Ann is deferred
// with a next attempt.
func (e *callsEnv) waitDeferred(t *testing.T, id string) {
	t.Helper()
	for {
		w, err := e.ob.Waiting(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		if len(w) == 1 && w[0].State == postroom.WaitingDeferred && w[0].NextAttempt != nil {
			return
		}
		select {
		case <-t.Context().Done():
			t.Fatalf("waiting %+v, want Ann deferred", w)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// TestQueuedCalls: a call sent later whose relay greylisted Ann shows in
// the list and on its page with her waiting, the last reason and the
// next attempt; retry has her tried now and the call ends sent. A call
// of another account is not found, and a cancel of a call sent at a
// later time rejects its recipients.
func TestQueuedCalls(t *testing.T) {
	e := newCallsEnv(t)
	id := e.enqueue(t, account, time.Time{}, ann, "bob@example.net")
	e.waitDeferred(t, id)

	_, body := e.get(t, "/calls")
	if !strings.Contains(body, id) || !strings.Contains(body, "message.send") {
		t.Errorf("the calls page lacks the call:\n%s", body)
	}
	_, body = e.get(t, "/call?id="+url.QueryEscape(id))
	for _, want := range []string{ann, "greylisted", `id="retry"`, `id="cancel"`, "badge-deferred", "sent 1"} {
		if !strings.Contains(body, want) {
			t.Errorf("the call's page lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, "not known") {
		t.Errorf("the call's page shows no next attempt for Ann:\n%s", body)
	}
	// The same call seen from another account is unknown.
	otherView := newFixture(t, func(o *console.Options) {
		o.Calls = e.ob.AccountCalls()
		o.Account = func(*http.Request) (string, error) { return other, nil }
	})
	if res, _ := otherView.get(t, "/call?id="+url.QueryEscape(id)); res.StatusCode != http.StatusNotFound {
		t.Errorf("another account's call: %d, want 404", res.StatusCode)
	}
	if res, _ := otherView.post(t, "/call/retry", url.Values{"id": {id}}); res.StatusCode != http.StatusNotFound {
		t.Errorf("another account's retry: %d, want 404", res.StatusCode)
	}

	res, _ := e.post(t, "/call/retry", url.Values{"id": {id}})
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "../call?"+(url.Values{"id": {id}, "retried": {"1"}}).Encode() {
		t.Fatalf("retry: %d, %q", res.StatusCode, res.Header.Get("Location"))
	}
	s := outboxenv.WaitDone(t, e.ob, id)
	if s.Counts[postroom.StatusSent] != 2 {
		t.Errorf("after the retry: %v, want both sent", s.Counts)
	}
	_, body = e.get(t, "/call?id="+url.QueryEscape(id))
	if !strings.Contains(body, `id="results"`) || strings.Contains(body, `id="retry"`) || strings.Contains(body, `id="cancel"`) {
		t.Errorf("the done call's page:\n%s", body)
	}

	later := e.enqueue(t, account, time.Now().Add(24*time.Hour), "carol@example.net")
	res, body = e.get(t, "/call/cancel?id="+url.QueryEscape(later))
	if res.StatusCode != http.StatusOK || !strings.Contains(body, `method="post"`) {
		t.Fatalf("cancel confirmation: %d\n%s", res.StatusCode, body)
	}
	if s, err := e.ob.Status(t.Context(), later); err != nil || s.State != postroom.CallQueued {
		t.Fatalf("after the confirmation page: %+v, %v; want it queued", s, err)
	}
	res, _ = e.post(t, "/call/cancel", url.Values{"id": {later}, "reason": {"sent by mistake"}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("cancel: %d", res.StatusCode)
	}
	s = outboxenv.WaitDone(t, e.ob, later)
	if len(s.Results) != 1 || s.Results[0].Status != postroom.StatusRejected || !strings.Contains(s.Results[0].Reason, "sent by mistake") {
		t.Errorf("after the cancel: %+v", s.Results)
	}
	if res, _ := e.get(t, "/call?id=nope"); res.StatusCode != http.StatusNotFound {
		t.Errorf("an unknown call: %d, want 404", res.StatusCode)
	}
}
