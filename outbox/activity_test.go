package outbox_test

import (
	"testing"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/events"
	"github.com/postroom/postroom/internal/testkit/smtptest"
	"github.com/postroom/postroom/outbox"
	"github.com/postroom/postroom/sqldb/pgxdb"
	"github.com/postroom/postroom/transport"
)

// TestEnqueueActivity: Enqueue gives each recipient to send a queued
// event under the call's id, which message activity shows as a queued
// message; once the workers sent them, each is a sent message of that
// call, its timeline headed by the queued event, with its rendered
// subject.
func TestEnqueueActivity(t *testing.T) {
	ctx := t.Context()
	pool := newPool(t)
	mem, err := events.NewMemory(events.MemoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	srv := smtptest.NewServer(t, smtptest.Options{DiscardData: true})
	tr, err := transport.NewSMTP(transport.SMTPOptions{Addr: srv.Addr(), TLS: transport.NoTLS, Retry: transport.RetryPolicy{Attempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	m, err := postroom.New(tr, postroom.Options{Auth: postroom.NoAuth{}, OnEvent: mem.OnEvent})
	if err != nil {
		t.Fatal(err)
	}
	ob, err := outbox.New(m, pgxdb.New(pool), outbox.Options{JobSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{db: pgxdb.New(pool), pool: pool, srv: srv, ob: ob}
	call := newCall("act", 3)
	call.Recipients = append(call.Recipients, postroom.Recipient{Email: "not an address"})
	id := e.enqueue(t, postroom.OpSend, call, outbox.EnqueueOptions{})

	queued, _, err := mem.Search(ctx, events.Query{AccountID: "acct", CallID: id})
	if err != nil {
		t.Fatal(err)
	}
	if len(queued) != 3 {
		t.Fatalf("after Enqueue: %d messages of the call, want 3 queued", len(queued))
	}
	for _, g := range queued {
		if g.State != events.StateQueued || g.SendID != "" || g.From != "shop@example.com" {
			t.Errorf("after Enqueue: %+v; want queued, no send id, the sender", g)
		}
	}

	startClient(t, ob)
	e.wait(t, id)
	sent, _, err := mem.Search(ctx, events.Query{AccountID: "acct", CallID: id})
	if err != nil {
		t.Fatal(err)
	}
	if len(sent) != 3 {
		t.Fatalf("after the run: %d messages of the call, want 3", len(sent))
	}
	for _, g := range sent {
		if g.State != events.StateSent || g.SendID == "" || len(g.Timeline) != 2 || g.Timeline[0].Type != postroom.EventQueued || g.Subject == "" {
			t.Errorf("after the run: %+v; want sent, its timeline queued then send, its subject", g)
		}
	}
}
