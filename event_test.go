package postroom_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/testkit/smtptest"
	"github.com/postroom/postroom/suppression"
	"github.com/postroom/postroom/templatestore"
	"github.com/postroom/postroom/transport"
)

// events collects the events of Options.OnEvent, from any goroutine.
type events struct {
	mu sync.Mutex
	by map[string]postroom.Event // by email
	n  int
}

func (e *events) add(ctx context.Context, ev postroom.Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.by == nil {
		e.by = map[string]postroom.Event{}
	}
	e.by[ev.Email] = ev
	e.n++
}

// TestEventsOfASend sends through a real SMTP server that refuses some
// recipients at RCPT, and checks each recipient's event: send, deferral,
// hard_bounce only for a dead address's enhanced status, soft_bounce for
// any other refusal, reject for a listed address, none for an invalid one.
func TestEventsOfASend(t *testing.T) {
	faults := map[string]smtptest.Fault{
		"nouser@example.com": {Code: 550, Enhanced: "5.1.1", Text: "user unknown"},
		"moved@example.com":  {Code: 551, Enhanced: "5.1.6", Text: "mailbox moved"},
		"full@example.com":   {Code: 550, Enhanced: "5.2.2", Text: "mailbox full"},
		"spammy@example.com": {Code: 554, Enhanced: "5.7.1", Text: "message refused as spam"},
		"bare@example.com":   {Code: 550, Text: "no"}, // the server writes 5.0.0
		"later@example.com":  {Code: 451, Enhanced: "4.3.0", Text: "try again later"},
	}
	srv := smtptest.NewServer(t, smtptest.Options{Faults: func(c smtptest.Command) smtptest.Fault {
		if c.Stage == smtptest.Rcpt {
			return faults[c.Addr]
		}
		return smtptest.Fault{}
	}})
	tr, err := transport.NewSMTP(transport.SMTPOptions{Addr: srv.Addr(), TLS: transport.NoTLS, Retry: transport.RetryPolicy{Attempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	at := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	var got events
	m := newMailer(t, tr, postroom.Options{
		Suppressions: newList(t, "acct"),
		OnEvent:      got.add,
		Now:          func() time.Time { return at },
		Concurrency:  3,
	})
	call := smallCall("ok@example.com", "nouser@example.com", "moved@example.com", "full@example.com", "spammy@example.com",
		"bare@example.com", "later@example.com", "gone@example.com", "dead@example.com", "not an address")
	results, err := m.Send(t.Context(), call)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		typ            postroom.EventType
		reason, status string
	}{
		"ok@example.com":     {postroom.EventSend, "", ""},
		"nouser@example.com": {postroom.EventHardBounce, "hard-bounce", "5.1.1"},
		"dead@example.com":   {postroom.EventReject, "hard-bounce", ""},
		"moved@example.com":  {postroom.EventHardBounce, "hard-bounce", "5.1.6"},
		"full@example.com":   {postroom.EventSoftBounce, "hard-bounce", "5.2.2"},
		"spammy@example.com": {postroom.EventSoftBounce, "hard-bounce", "5.7.1"},
		"bare@example.com":   {postroom.EventSoftBounce, "hard-bounce", "5.0.0"},
		"later@example.com":  {postroom.EventDeferral, "soft-bounce", "4.3.0"},
		"gone@example.com":   {postroom.EventReject, "unsub", ""},
	}
	if got.n != len(want) {
		t.Errorf("%d events; want %d (one per recipient but the invalid one)", got.n, len(want))
	}
	for i, r := range results {
		w, ok := want[r.Email]
		e, had := got.by[r.Email]
		if !ok {
			if had {
				t.Errorf("%s (%s): event %+v; want none", r.Email, r.Status, e)
			}
			continue
		}
		if !had {
			t.Errorf("%s: no event", r.Email)
			continue
		}
		if e.Type != w.typ || e.Reason != w.reason || e.Status != w.status || e.SendID != r.SendID || e.AccountID != "acct" || !e.At.Equal(at) {
			t.Errorf("results[%d] %s %q: event %+v; want %s, reason %q, status %q, its send id, account, time", i, r.Status, r.Reason, e, w.typ, w.reason, w.status)
		}
	}
	if e := got.by["nouser@example.com"]; e.Diagnostic != "550 5.1.1 user unknown" {
		t.Errorf("diagnostic %q; want the reply", e.Diagnostic)
	}
	if e := got.by["gone@example.com"]; e.Diagnostic != "suppressed since 2026-11-20" || e.SendID != "" {
		t.Errorf("reject event %+v; want the reason's detail and no send id", e)
	}

	// The JSON form has Mandrill's names.
	b, err := json.Marshal(got.by["nouser@example.com"])
	if err != nil {
		t.Fatal(err)
	}
	var j map[string]any
	if err := json.Unmarshal(b, &j); err != nil {
		t.Fatal(err)
	}
	if j["event"] != "hard_bounce" || j["email"] != "nouser@example.com" || j["ts"] != "2026-11-21T10:00:00Z" || j["status"] != "5.1.1" {
		t.Errorf("JSON %s", b)
	}

	// Fed to a list, the bounces list the dead addresses for good and
	// count the others.
	list, err := suppression.NewMemory(suppression.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range got.by {
		if o, ok := suppression.ObservationOf(e); ok {
			if _, err := list.Observe(t.Context(), o); err != nil {
				t.Fatal(err)
			}
		}
	}
	page, _, err := list.List(t.Context(), suppression.Query{AccountID: "acct", IncludeExpired: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(page) != 2 || page[0].Address != "moved@example.com" || page[1].Address != "nouser@example.com" || page[0].Reason != postroom.ReasonHardBounce {
		t.Errorf("list after the events: %+v; want moved@ and nouser@, hard-bounce", page)
	}
}

// TestEventsCanceled: a recipient that a call canceled mid-way never
// reached is a deferral event with reason canceled; Preview and Validate
// emit none.
func TestEventsCanceled(t *testing.T) {
	var got events
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	first := postroom.TransportFunc(func(context.Context, *postroom.Envelope) error {
		cancel() // the call ends after its first message
		return nil
	})
	m := newMailer(t, first, postroom.Options{OnEvent: got.add, Concurrency: 1})
	if _, err := m.Send(ctx, smallCall("a@example.com", "b@example.com")); err == nil {
		t.Fatal("Send canceled mid-way: nil error")
	}
	if got.n != 2 || got.by["a@example.com"].Type != postroom.EventSend || got.by["b@example.com"].Type != postroom.EventDeferral || got.by["b@example.com"].Reason != "canceled" {
		t.Errorf("events %+v; want a send, then a deferral, canceled", got.by)
	}
	got = events{}
	if _, err := m.Preview(t.Context(), postroom.OpSend, smallCall("a@example.com"), postroom.PreviewOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Validate(t.Context(), postroom.OpSend, smallCall("a@example.com")); err != nil {
		t.Fatal(err)
	}
	if got.n != 0 {
		t.Errorf("Preview and Validate emitted %d events; want none", got.n)
	}
}

// TestEventsCarryTheCall: the events of a run carry its call id (the one
// RunOptions gives, or one drawn for the run, the same for each of its
// recipients and another for the next run), the sender, each recipient's
// rendered subject and the stored templates; Queued emits a queued event
// per recipient left to send and the reject of a listed one, with the
// addresses as the sending path writes them.
func TestEventsCarryTheCall(t *testing.T) {
	store := templatestore.NewMemory()
	if err := store.Put("acct", "welcome-html", "<p>Welcome {{name}}</p>"); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var got []postroom.Event
	m := newMailer(t, transport.NewMemory(), postroom.Options{Templates: store, Suppressions: newList(t, "acct"), OnEvent: func(_ context.Context, e postroom.Event) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, e)
	}})
	call := smallCall("a@example.com", "b@EXAMPLE.com")
	call.Recipients[1].Params = map[string]any{"name": "Bob"}
	if _, err := m.Send(t.Context(), call); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Send(t.Context(), smallCall("c@example.com")); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("%d events, want 3", len(got))
	}
	subjects := map[string]string{}
	for _, e := range got[:2] {
		subjects[e.Email] = e.Subject
		if len(e.CallID) != 32 || e.CallID != got[0].CallID || e.From != "orders@shop.example.com" || e.HTMLTemplateID != "" {
			t.Errorf("event %+v: want the run's drawn call id, the sender, no template", e)
		}
	}
	if subjects["a@example.com"] != "Hello Ann" || subjects["b@example.com"] != "Hello Bob" {
		t.Errorf("subjects %v: want each recipient's, rendered", subjects)
	}
	if got[2].CallID == got[0].CallID || got[2].CallID == got[2].SendID {
		t.Errorf("second call's id %q: want another, not a send id", got[2].CallID)
	}

	got = nil
	tc := smallCall("a@example.com")
	tc.Message.HTML, tc.Message.Text, tc.Message.HTMLTemplateID = "", "", "welcome-html"
	p, err := m.Prepare(t.Context(), postroom.OpSendTemplate, tc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Run(t.Context(), postroom.RunOptions{CallID: "queued-call-1"}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].CallID != "queued-call-1" || got[0].HTMLTemplateID != "welcome-html" || got[0].TextTemplateID != "" || got[0].Subject != "Hello Ann" {
		t.Errorf("events %+v: want the given call id and the html template", got)
	}

	got = nil
	qc := smallCall("a@Example.COM", "dead@example.com", "not an address")
	checked, err := m.Validate(t.Context(), postroom.OpSend, qc)
	if err != nil {
		t.Fatal(err)
	}
	m.Queued(t.Context(), "call-2", postroom.OpSend, qc, checked)
	if len(got) != 2 {
		t.Fatalf("Queued: %d events (%+v), want a queued and a reject", len(got), got)
	}
	if e := got[0]; e.Type != postroom.EventQueued || e.Email != "a@example.com" || e.CallID != "call-2" || e.SendID != "" || e.From != "orders@shop.example.com" || e.At.IsZero() {
		t.Errorf("queued event %+v", e)
	}
	if e := got[1]; e.Type != postroom.EventReject || e.Email != "dead@example.com" || e.CallID != "call-2" || e.Reason != "hard-bounce" {
		t.Errorf("reject event %+v", e)
	}
}
