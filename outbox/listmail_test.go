package outbox_test

import (
	"context"
	"sync"
	"testing"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/events"
	"github.com/postroom/postroom/internal/testkit/smtptest"
	"github.com/postroom/postroom/outbox"
	"github.com/postroom/postroom/sqldb/pgxdb"
	"github.com/postroom/postroom/transport"
)

// TestEnqueueStoresTheList: the list Enqueue stores for a call is the
// one postroom.Prepared.List gives for it, whatever the List-Id's shape,
// and "" for a call without one; Status and Calls read it back.
func TestEnqueueStoresTheList(t *testing.T) {
	e := newEnv(t, setup{noWork: true})
	m := smtpMailer(t, e.srv.Addr(), nil)
	for _, tc := range []struct {
		name    string
		headers []postroom.Header
	}{
		{"none", nil},
		{"other headers", []postroom.Header{{Name: "X-Campaign", Value: "<not.a.list>"}}},
		{"ListID", []postroom.Header{postroom.ListID("Shop news", "news.shop.example.com")}},
		{"upper case", []postroom.Header{{Name: "LIST-ID", Value: "Shop <News.Shop.Example.COM>"}}},
		{"spaces", []postroom.Header{{Name: "list-id", Value: "  <deals.shop.example.com> \t"}}},
		{"quoted phrase", []postroom.Header{postroom.ListID("News, deals & more", "deals.shop.example.com")}},
		{"encoded phrase", []postroom.Header{postroom.ListID("Café news", "cafe.shop.example.com")}},
		{"among others", []postroom.Header{{Name: "X-A", Value: "1"}, {Name: "List-Id", Value: "<a-b_c.example>"}, {Name: "X-B", Value: "<x.y>"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			call := newCall("list", 2)
			call.Message.Headers = tc.headers
			p, err := m.Prepare(t.Context(), postroom.OpSend, call)
			if err != nil {
				t.Fatal(err)
			}
			id := e.enqueue(t, postroom.OpSend, call, outbox.EnqueueOptions{})
			st, err := e.ob.Status(t.Context(), id)
			if err != nil {
				t.Fatal(err)
			}
			if st.List != p.List() {
				t.Errorf("Status: list %q, want %q (Prepared.List)", st.List, p.List())
			}
			calls, _, err := e.ob.Calls(t.Context(), outbox.CallsQuery{AccountID: call.AccountID, Limit: 1})
			if err != nil || len(calls) != 1 || calls[0].ID != id || calls[0].List != p.List() {
				t.Errorf("Calls: %+v, %v; want call %s of list %q", calls, err, id, p.List())
			}
		})
	}
}

// TestListCallEvents: a list call and a transactional call sent later
// through the outbox, their events given to the Mailer's OnEvent and
// written to events.SQL by a Recorder. The list call's send events carry
// its list, the transactional call's none; events.SQL's Send reads the
// list back; and a complaint recorded later about a list message (as
// package inbound records it) shows with its list in the call's
// Status.Later.
func TestListCallEvents(t *testing.T) {
	const news = "news.shop.example.com"
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
	var (
		mu   sync.Mutex
		seen = map[string]postroom.Event{} // send events by send id
	)
	onEvent := func(ctx context.Context, ev postroom.Event) {
		if ev.Type == postroom.EventSend {
			mu.Lock()
			seen[ev.SendID] = ev
			mu.Unlock()
		}
		rec.OnEvent(ctx, ev)
	}
	srv := smtptest.NewServer(t, smtptest.Options{DiscardData: true})
	tr, err := transport.NewSMTP(transport.SMTPOptions{Addr: srv.Addr(), TLS: transport.NoTLS, Retry: transport.RetryPolicy{Attempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	m, err := postroom.New(tr, postroom.Options{Auth: postroom.NoAuth{}, OnEvent: onEvent})
	if err != nil {
		t.Fatal(err)
	}
	ob, err := outbox.New(m, pgxdb.New(pool), outbox.Options{Events: log, JobSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	startClient(t, ob)
	e := &env{db: pgxdb.New(pool), pool: pool, srv: srv, ob: ob}

	listCall := newCall("news", 5)
	listCall.Message.Headers = []postroom.Header{postroom.ListID("Shop news", "News.Shop.Example.com")}
	listID := e.enqueue(t, postroom.OpSend, listCall, outbox.EnqueueOptions{})
	txID := e.enqueue(t, postroom.OpSend, newCall("receipt", 2), outbox.EnqueueOptions{})
	for _, c := range []struct {
		id, list string
	}{{listID, news}, {txID, ""}} {
		st := e.wait(t, c.id)
		for i, r := range st.Results {
			if r.Status != postroom.StatusSent {
				t.Fatalf("call %s, result %d: %+v, want sent", c.id, i, r)
			}
			mu.Lock()
			ev, ok := seen[r.SendID]
			mu.Unlock()
			if !ok || ev.List != c.list || ev.Email != r.Email {
				t.Errorf("call %s, recipient %d: send event %+v (seen %v), want list %q", c.id, i, ev, ok, c.list)
			}
		}
	}
	if err := rec.Flush(ctx); err != nil {
		t.Fatal(err)
	}

	st, err := ob.Status(ctx, listID)
	if err != nil {
		t.Fatal(err)
	}
	complained := st.Results[3]
	snd, ok, err := log.Lookup(ctx, complained.SendID)
	if err != nil || !ok || snd.List != news || snd.Email != complained.Email {
		t.Fatalf("events.SQL.Send(%s) = %+v, %v, %v; want %s of list %s", complained.SendID, snd, ok, err, complained.Email, news)
	}
	rec.OnEvent(ctx, postroom.Event{Type: postroom.EventSpam, SendID: snd.ID, AccountID: snd.AccountID, Email: snd.Email, Reason: "abuse", List: snd.List})
	if err := rec.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if st, err = ob.Status(ctx, listID); err != nil {
		t.Fatal(err)
	}
	if len(st.Later) != 1 || st.Later[0].Type != postroom.EventSpam || st.Later[0].SendID != complained.SendID || st.Later[0].List != news {
		t.Errorf("Later = %+v, want recipient 3's complaint of list %s", st.Later, news)
	}

	if st.List != news {
		t.Errorf("Status(list call).List = %q, want %q", st.List, news)
	}
	if st, err = ob.Status(ctx, txID); err != nil || st.List != "" {
		t.Errorf("Status(transactional call): %+v, %v; want no list", st, err)
	}
}
