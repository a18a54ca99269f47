package outbox_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/events"
	"github.com/postroom/postroom/httpapi"
	"github.com/postroom/postroom/inbound"
	"github.com/postroom/postroom/internal/testkit/pgtest"
	"github.com/postroom/postroom/internal/testkit/smtptest"
	"github.com/postroom/postroom/outbox"
	"github.com/postroom/postroom/sqldb/pgxdb"
	"github.com/postroom/postroom/transport"
)

// laterDSN is a DSN (RFC 3464) delivered to rcpt, a VERP address, saying
// that the message to failed bounced for good (550 5.1.1).
func laterDSN(rcpt, failed string) string {
	return strings.ReplaceAll(`From: MAILER-DAEMON@mta.example.org (Mail Delivery System)
To: `+rcpt+`
Subject: Undelivered Mail Returned to Sender
Auto-Submitted: auto-replied
MIME-Version: 1.0
Content-Type: multipart/report; report-type=delivery-status; boundary="B1"

--B1
Content-Type: text/plain

Your message could not be delivered.

--B1
Content-Type: message/delivery-status

Reporting-MTA: dns; mta.example.org

Final-Recipient: rfc822; `+failed+`
Original-Recipient: rfc822;`+failed+`
Action: failed
Status: 5.1.1
Diagnostic-Code: smtp; 550 5.1.1 <`+failed+`>: User unknown

--B1--
`, "\n", "\r\n")
}

// TestStatusLater: a call sent later through the outbox, whose send
// events an events.Recorder writes to events.SQL on the same PostgreSQL;
// one recipient's message bounces after its result was final, and the
// bounce comes back through an inbound.Receiver. The call's Status, and
// GET /api/1.0/calls/{id} over a real httpapi.Handler, show the bounce
// beside that recipient's result, which keeps the spec's shape and its
// final status.
func TestStatusLater(t *testing.T) {
	ctx := t.Context()
	pool := newPool(t)
	if err := events.Migrate(ctx, pgxdb.New(pool)); err != nil {
		t.Fatal(err)
	}
	log, err := events.NewSQL(pgxdb.New(pool), events.SQLOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := log.NewRecorder(events.RecorderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	srv := smtptest.NewServer(t, smtptest.Options{DiscardData: true})
	tr, err := transport.NewSMTP(transport.SMTPOptions{Addr: srv.Addr(), TLS: transport.NoTLS, Retry: transport.RetryPolicy{Attempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	verp := postroom.VERP{Domain: "bounce.example.com"}
	m, err := postroom.New(tr, postroom.Options{Auth: postroom.NoAuth{}, VERP: verp, OnEvent: rec.OnEvent})
	if err != nil {
		t.Fatal(err)
	}
	ob, err := outbox.New(m, pgxdb.New(pool), outbox.Options{Events: log})
	if err != nil {
		t.Fatal(err)
	}
	startClient(t, ob)
	e := &env{db: pgxdb.New(pool), pool: pool, srv: srv, ob: ob}

	id := e.enqueue(t, postroom.OpSend, newCall("later", 3), outbox.EnqueueOptions{})
	st := e.wait(t, id)
	for i, r := range st.Results {
		if r.Status != postroom.StatusSent {
			t.Fatalf("result %d: %+v, want sent", i, r)
		}
	}
	if st.Later != nil {
		t.Errorf("Later %+v before anything came back", st.Later)
	}
	if err := rec.Flush(ctx); err != nil { // the send events are written
		t.Fatal(err)
	}

	// Recipient 1's message bounces, after its result was final.
	bounced := st.Results[1]
	receiver, err := inbound.New(inbound.Options{VERP: verp, Sends: log, OnEvent: rec.OnEvent})
	if err != nil {
		t.Fatal(err)
	}
	out, err := receiver.Handle(ctx, strings.NewReader(laterDSN(verp.Address(bounced.SendID), bounced.Email)), verp.Address(bounced.SendID))
	if err != nil || out.Verdict != inbound.VerdictRecorded {
		t.Fatalf("Handle: %s, %v; want recorded", out.Verdict, err)
	}
	if err := rec.Flush(ctx); err != nil {
		t.Fatal(err)
	}

	st2, err := ob.Status(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(st2.Results, st.Results) {
		t.Errorf("results changed:\n%+v\nwant\n%+v", st2.Results, st.Results)
	}
	if len(st2.Later) != 1 {
		t.Fatalf("Later %+v, want recipient 1's bounce alone", st2.Later)
	}
	if l := st2.Later[0]; l.Type != postroom.EventHardBounce || l.SendID != bounced.SendID || l.Email != bounced.Email || l.Status != "5.1.1" || l.Reason != "user-unknown" || l.AccountID != "acct" {
		t.Errorf("Later[0] = %+v, want recipient 1's hard_bounce (5.1.1, user-unknown)", l)
	}

	// Over HTTP: "later" beside "results", whose entries keep the spec's
	// four keys.
	h, err := httpapi.New(m, httpapi.Options{Async: ob.AccountCalls(), NoTemplateStore: true})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	var body struct {
		Results []map[string]any `json:"results"`
		Later   []map[string]any `json:"later"`
	}
	(&httpEnv{env: e, url: hs.URL}).do(t, http.MethodGet, httpapi.CallsPath+id+"?account_id=acct", nil, httpapi.KeyHeader, "k").decode(t, http.StatusOK, &body)
	if len(body.Results) != 3 {
		t.Fatalf("results %v", body.Results)
	}
	for _, r := range body.Results {
		keys := make([]string, 0, len(r))
		for k := range r {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if !slices.Equal(keys, []string{"email", "reason", "send_id", "status"}) {
			t.Errorf("a result's keys %v, want email, reason, send_id, status", keys)
		}
	}
	if len(body.Later) != 1 || body.Later[0]["event"] != "hard_bounce" || body.Later[0]["send_id"] != bounced.SendID || body.Later[0]["email"] != bounced.Email {
		raw, _ := json.Marshal(body.Later)
		t.Errorf("later %s, want recipient 1's hard_bounce", raw)
	}

	// An event log that cannot answer makes Status fail, rather than show
	// a status without what came back.
	closed, err := pgxpool.New(ctx, pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	closed.Close()
	down, err := events.NewSQL(pgxdb.New(closed), events.SQLOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ob2, err := outbox.New(m, pgxdb.New(pool), outbox.Options{Events: down})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ob2.Status(ctx, id); err == nil {
		t.Error("Status with an event log that is down: nil error")
	}
}
