package inbound_test

import (
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/events"
	"github.com/postroom/postroom/inbound"
	"github.com/postroom/postroom/internal/pgtest"
	"github.com/postroom/postroom/suppression"
	"github.com/postroom/postroom/transport"
)

// TestSQLPath: the PostgreSQL deployment. The Mailer's send events go to
// an events.Recorder (written in one batch at Flush), the Receiver asks
// for a bounce again until its send is written, then proves it with
// events.SQL and lists the address in suppression.SQL, and
// the event log shows the send and the bounce by cursor.
func TestSQLPath(t *testing.T) {
	ctx := t.Context()
	pool, err := pgxpool.New(ctx, pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if err := events.MigrateSQL(ctx, pool); err != nil {
		t.Fatal(err)
	}
	if err := suppression.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	log, err := events.NewSQL(pool, events.SQLOptions{})
	if err != nil {
		t.Fatal(err)
	}
	recorder, err := log.NewRecorder(events.RecorderOptions{FlushAfter: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	list, err := suppression.NewSQL(pool, suppression.Options{})
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
	rec, err := inbound.New(inbound.Options{VERP: verp, Sends: log, Suppressions: list, OnEvent: recorder.OnEvent, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	gone := results[0]
	bounceMsg := dsn(verp.Address(gone.SendID), "gone@example.net", "failed", "5.1.1", "550 5.1.1 <gone@example.net>: User unknown")

	// Before Flush the send is not written: the bounce is to be offered
	// again later, and nothing is listed.
	out, err := rec.Handle(ctx, strings.NewReader(bounceMsg), verp.Address(gone.SendID))
	if err != nil || out.Verdict != inbound.VerdictRetryLater || len(out.Listed) != 0 || len(out.Events) != 0 {
		t.Fatalf("before Flush: %+v, %v; want %s, nothing listed", out, err, inbound.VerdictRetryLater)
	}
	if err := recorder.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	out, err = rec.Handle(ctx, strings.NewReader(bounceMsg), verp.Address(gone.SendID))
	if err != nil || out.Verdict != inbound.VerdictRecorded || len(out.Listed) != 1 {
		t.Fatalf("after Flush: %+v, %v; want recorded and listed", out, err)
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
