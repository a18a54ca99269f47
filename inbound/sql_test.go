package inbound_test

import (
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/events"
	"github.com/postroom/postroom/inbound"
	"github.com/postroom/postroom/internal/testkit/pgtest"
	"github.com/postroom/postroom/sqldb/pgxdb"
	"github.com/postroom/postroom/suppression"
	"github.com/postroom/postroom/transport"
)

// TestSQLPath: the PostgreSQL deployment. The Mailer's send events go to
// an events.Recorder (written in one batch at Flush), a bounce delivered
// over SMTP before the Flush waits for its send, is proven with
// events.SQL once the Flush wrote it and lists the address in
// suppression.SQL, and the event log shows the send and the bounce by
// cursor.
func TestSQLPath(t *testing.T) {
	ctx := t.Context()
	pool, err := pgxpool.New(ctx, pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if err := events.Migrate(ctx, pgxdb.New(pool)); err != nil {
		t.Fatal(err)
	}
	if err := suppression.Migrate(ctx, pgxdb.New(pool)); err != nil {
		t.Fatal(err)
	}
	log, err := events.NewSQL(pgxdb.New(pool), events.SQLOptions{})
	if err != nil {
		t.Fatal(err)
	}
	recorder, err := log.NewRecorder(events.RecorderOptions{FlushAfter: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	list, err := suppression.NewSQL(pgxdb.New(pool), suppression.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := postroom.New(transport.NewMemory(), postroom.Options{
		Auth: postroom.NoAuth{}, VERP: verp, Suppressions: list, OnEvent: recorder.OnEvent,
	})
	if err != nil {
		t.Fatal(err)
	}
	results, err := m.Send(ctx, &postroom.Call{AccountID: account,
		Message:    postroom.Message{FromEmail: "news@shop.example.com", Subject: "News", Text: "Hello."},
		Recipients: []postroom.Recipient{{Email: "Gone@Example.NET"}, {Email: "ann@example.net"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	// The bounce comes back before the Recorder writes the send (a
	// relay that refuses at once): the Receiver looks the send up, finds
	// nothing and waits; the Recorder's Flush, made once that lookup
	// missed, ends the wait, and the bounce is taken in its first
	// delivery: 250, listed.
	missed := make(chan struct{})
	ws := &watchedSends{Sends: log, onMiss: func() { close(missed) }}
	rec, err := inbound.New(inbound.Options{
		VERP: verp, Sends: ws, Suppressions: list, OnEvent: recorder.OnEvent, Logger: testLogger(t),
		SendWait: time.Minute, // ends when the send is found; long, so that a loaded machine gives no 451
	})
	if err != nil {
		t.Fatal(err)
	}
	addr := serve(t, rec, false)
	gone := results[0]
	bounceMsg := dsn(verp.Address(gone.SendID), "gone@example.net", "failed", "5.1.1", "550 5.1.1 <gone@example.net>: User unknown")
	replied := make(chan error, 1)
	go func() { replied <- deliverErr(addr, bounceMsg, verp.Address(gone.SendID)) }()
	var flushedAt time.Time
	select {
	case <-missed:
		if err := recorder.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		flushedAt = time.Now()
	case err := <-replied:
		t.Fatalf("the bounce was answered (%v) before its send was looked up and missed", err)
	}
	err = <-replied
	if c, _ := code(t, err); c != 250 {
		t.Fatalf("first delivery: %v, want 250 (taken once the send was written)", err)
	}
	_, _, firstMiss := ws.counts()
	t.Logf("report read to listed: %v, of which %v after the Recorder's Flush", time.Since(firstMiss).Round(time.Millisecond), time.Since(flushedAt).Round(time.Millisecond))
	if s, err := list.Suppressed(ctx, account, []string{"gone@example.net"}, time.Now()); err != nil || len(s) != 1 || s[0].Reason != postroom.ReasonHardBounce {
		t.Fatalf("after the first delivery: suppressed %+v, %v; want hard-bounce", s, err)
	}
	if err := recorder.Flush(ctx); err != nil {
		t.Fatal(err)
	}

	// The next call rejects the address, whatever its case.
	results, err = m.Send(ctx, &postroom.Call{AccountID: account,
		Message:    postroom.Message{FromEmail: "news@shop.example.com", Subject: "News", Text: "Hello."},
		Recipients: []postroom.Recipient{{Email: "gone@example.net"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if r := results[0]; r.Status != postroom.StatusRejected || r.Code != postroom.ReasonHardBounce {
		t.Errorf("next call: %s %q, want rejected hard-bounce", r.Status, r.Reason)
	}
	if err := recorder.Flush(ctx); err != nil {
		t.Fatal(err)
	}

	// The log: two sends, the hard bounce, the reject, in order.
	var types []postroom.EventType
	var bounceEvent postroom.Event
	cursor := ""
	for {
		page, next, err := log.List(ctx, account, cursor, 2)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		for _, e := range page {
			types = append(types, e.Type)
			if e.Type == postroom.EventHardBounce {
				bounceEvent = e
			}
		}
		cursor = next
	}
	want := []postroom.EventType{postroom.EventSend, postroom.EventSend, postroom.EventHardBounce, postroom.EventReject}
	if len(types) != len(want) || types[0] != want[0] || types[1] != want[1] || types[2] != want[2] || types[3] != want[3] {
		t.Errorf("event log %v, want %v", types, want)
	}
	if bounceEvent.SendID != gone.SendID || bounceEvent.Status != "5.1.1" || !strings.EqualFold(bounceEvent.Email, "gone@example.net") {
		t.Errorf("hard_bounce event %+v", bounceEvent)
	}
}
