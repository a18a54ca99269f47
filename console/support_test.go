package console_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/riverqueue/river"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/console"
	"github.com/postroom/postroom/events"
	"github.com/postroom/postroom/internal/testkit/browsertest"
	"github.com/postroom/postroom/internal/testkit/outboxenv"
	"github.com/postroom/postroom/internal/testkit/smtptest"
	"github.com/postroom/postroom/outbox"
	"github.com/postroom/postroom/sqldb/pgxdb"
	"github.com/postroom/postroom/transport"
)

// TestBrowserSupportEndToEnd answers the support question over real
// parts in Chromium: one Mailer, over SMTP to a relay that greylists
// Ann's first attempt, records its events in the console's activity
// store. Her password reset sent later by a real outbox is greylisted and
// waits, shown on the call's page with the reply and a next attempt,
// until the person clicks Retry; a direct call reaches her; a third
// message hard-bounces (the event package inbound records for a bounce).
// The search of her address then shows the three: the queued call as two
// messages, since each attempt of the outbox has a send id of its own
// (its deferred attempt, then its send), each with its timeline.
func TestBrowserSupportEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("drives a headless Chromium")
	}
	ctx := browsertest.New(t, 1100, 760)
	pool := outboxenv.NewPool(t)
	relay := smtptest.NewServer(t, smtptest.Options{DiscardData: true, Faults: func(c smtptest.Command) smtptest.Fault {
		if c.Stage == smtptest.Rcpt && c.Addr == ann && c.Attempt == 1 {
			return smtptest.Fault{Code: 451, Enhanced: "4.7.1", Text: "<ann@example.org>: greylisted, try again later"}
		}
		return smtptest.Fault{}
	}})
	tr, err := transport.NewSMTP(transport.SMTPOptions{Addr: relay.Addr(), TLS: transport.NoTLS, Retry: transport.RetryPolicy{Attempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	activity, err := events.NewMemory(events.MemoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := postroom.New(tr, postroom.Options{Auth: postroom.NoAuth{}, OnEvent: activity.OnEvent})
	if err != nil {
		t.Fatal(err)
	}
	ob, err := outbox.New(m, pgxdb.New(pool), outbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	outboxenv.StartClient(t, ob, &river.Config{RetryPolicy: retryInAnHour{}})
	c, err := console.New(console.Options{
		Account:  func(*http.Request) (string, error) { return account, nil },
		Activity: activity,
		Calls:    ob.AccountCalls(),
	})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle(prefix+"/", http.StripPrefix(prefix, c))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	reset := func() *postroom.Call {
		return &postroom.Call{AccountID: account, Message: postroom.Message{FromEmail: "no-reply@shop.example.com",
			Subject: "Reset your password", Text: "Follow the link."}, Recipients: []postroom.Recipient{{Email: ann}}}
	}
	// The call sent later: greylisted, it waits an hour.
	id := outboxenv.Enqueue(t, pgxdb.New(pool), ob, postroom.OpSend, reset(), outbox.EnqueueOptions{})
	(&callsEnv{ob: ob}).waitDeferred(t, id)
	// The direct call, and the one that bounces.
	var sendIDs []string
	for range 2 {
		rs, err := m.Send(t.Context(), reset())
		if err != nil || rs[0].Status != postroom.StatusSent {
			t.Fatalf("a direct call: %+v, %v", rs, err)
		}
		sendIDs = append(sendIDs, rs[0].SendID)
	}
	direct, bounced := sendIDs[0], sendIDs[1]
	activity.OnEvent(t.Context(), postroom.Event{Type: postroom.EventHardBounce, SendID: bounced, AccountID: account, Email: ann,
		Reason: "bounce", Status: "5.1.1", Diagnostic: mailboxGone})

	// The queued call: Ann waiting, greylisted, a next attempt; Retry.
	err = chromedp.Do(ctx,
		chromedp.Navigate(srv.URL+prefix+"/calls"),
		chromedp.WaitVisible(chromedp.CSS(`#calls`)),
		chromedp.Click(chromedp.CSS(`#calls a`)),
		chromedp.WaitVisible(chromedp.CSS(`#waiting`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	row, err := chromedp.Run(ctx, chromedp.TextContent(chromedp.CSS(`#waiting tbody tr`)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(row, ann) || !strings.Contains(row, "greylisted") || !strings.Contains(row, "deferred") || strings.Contains(row, "not known") {
		t.Errorf("Ann's waiting row: %q, want her deferred, greylisted, with a next attempt", row)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#retry`))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, `document.querySelector("#notice") !== null`)
	outboxenv.WaitDone(t, ob, id)

	// The search: four messages, newest first, each with its timeline.
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+prefix+"/messages?q="+url.QueryEscape(ann)), chromedp.WaitVisible(chromedp.CSS(`#messages`))); err != nil {
		t.Fatal(err)
	}
	rows, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('#messages tbody tr')].map(tr => tr.innerText)`))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 4 || !strings.Contains(rows[0], "sent") || !strings.Contains(rows[3], "deferred") || !strings.Contains(rows[3], "greylisted") {
		t.Fatalf("Ann's messages: %q, want the queued call's send, the two direct ones and the queued call's deferred attempt", rows)
	}
	timeline := func(sendID string) string {
		t.Helper()
		err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+prefix+"/message?id="+sendID), chromedp.WaitVisible(chromedp.CSS(`#timeline`)))
		if err != nil {
			t.Fatal(err)
		}
		items, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('#timeline li .badge')].map(b => b.textContent)`))
		if err != nil {
			t.Fatal(err)
		}
		return strings.Join(items, " ")
	}
	if got := timeline(direct); got != "send" {
		t.Errorf("the direct call's timeline: %q, want send", got)
	}
	if got := timeline(bounced); got != "send hard_bounce" {
		t.Errorf("the bounced message's timeline: %q, want send hard_bounce", got)
	}
	s, err := ob.Status(t.Context(), id)
	if err != nil || len(s.Results) != 1 || s.Results[0].SendID == "" {
		t.Fatalf("the queued call's status: %+v, %v", s, err)
	}
	if got := timeline(s.Results[0].SendID); got != "queued send" {
		t.Errorf("the queued call's send's timeline: %q, want queued send", got)
	}
	first := rows[3][strings.LastIndexByte(rows[3], '\t')+1:]
	if got := timeline(first); got != "queued deferral" {
		t.Errorf("the queued call's first attempt's timeline: %q, want queued deferral", got)
	}
}
