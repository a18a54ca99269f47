package main

import (
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/events"
	"github.com/postroom/postroom/internal/testkit/outboxenv"
	"github.com/postroom/postroom/internal/testkit/pgtest"
	"github.com/postroom/postroom/outbox"
	"github.com/postroom/postroom/sqldb/pgxdb"
)

// TestCallLater: a done call whose second message bounced after it left
// (a soft bounce, then a hard one, written to the events' table of the
// real PostgreSQL) shows the latest, after its recipient's index and
// address, in call's text as in its JSON; the text of a bounce, which a
// remote server wrote, reaches the terminal on one line without its
// control characters.
func TestCallLater(t *testing.T) {
	c, pool := migrated(t)
	ob, _ := worker(t, pool, app{work: true})
	id := enqueue(t, pool, ob, "ann@example.org", "bob@example.org")
	s := outboxenv.WaitDone(t, ob, id)
	if text := c.ok(t, "call", id); strings.Contains(text, "later") {
		t.Errorf("call printed later events before any came back:\n%s", text)
	}

	log, err := events.NewSQL(pgxdb.New(pool), events.SQLOptions{})
	if err != nil {
		t.Fatal(err)
	}
	bob := s.Results[1]
	at := time.Date(2026, 11, 28, 8, 0, 0, 0, time.UTC)
	err = log.Record(t.Context(), []postroom.Event{
		{Type: postroom.EventSoftBounce, SendID: bob.SendID, AccountID: "shop", Email: bob.Email, Reason: "mailbox-full", Status: "4.2.2", At: at},
		{Type: postroom.EventHardBounce, SendID: bob.SendID, AccountID: "shop", Email: bob.Email, Reason: "user-unknown", Status: "5.1.1",
			Diagnostic: "550 5.1.1 <bob@example.org>: no such user\r\n\x1b[2J here", At: at.Add(time.Hour)},
	})
	if err != nil {
		t.Fatal(err)
	}

	text := c.ok(t, "call", id)
	want := "later (1):\n  1 bob@example.org hard_bounce: user-unknown 5.1.1; at 2026-11-28T09:00:00Z; 550 5.1.1 <bob@example.org>: no such user [2J here\n"
	if !strings.Contains(text, want) || strings.Contains(text, "soft_bounce") || strings.Contains(text, "\x1b") {
		t.Errorf("call printed:\n%q\nwant it to hold\n%q", text, want)
	}
	if text := c.ok(t, "call", id, "-later", "0"); !strings.Contains(text, "later (1):\n  ... and 1 more") || strings.Contains(text, "hard_bounce") {
		t.Errorf("call -later 0 printed:\n%s", text)
	}

	var view postroom.CallStatus
	c.jsonOf(t, &view, "call", id)
	if len(view.Later) != 1 || view.Later[0].Type != postroom.EventHardBounce || view.Later[0].SendID != bob.SendID {
		t.Errorf("call -json: later %+v, want bob's hard_bounce", view.Later)
	}
}

// TestCallLaterNoEventLog: in a database whose application migrated only
// the outbox (no events' table), call shows a done call, and says that
// there is no event log to show what came back, rather than failing.
func TestCallLaterNoEventLog(t *testing.T) {
	c := cmd{dsn: pgtest.DSN(t)}
	pool, err := pgxpool.New(t.Context(), c.dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if err := outbox.Migrate(t.Context(), pgxdb.New(pool)); err != nil {
		t.Fatal(err)
	}
	ob, _ := worker(t, pool, app{work: true})
	id := enqueue(t, pool, ob, "ann@example.org")
	outboxenv.WaitDone(t, ob, id)
	if text := c.ok(t, "call", id); !strings.Contains(text, "done; sent 1") || !strings.Contains(text, "later: no event log") {
		t.Errorf("call printed:\n%s", text)
	}
	var view postroom.CallStatus
	c.jsonOf(t, &view, "call", id)
	if view.State != postroom.CallDone || view.Later != nil {
		t.Errorf("call -json: %+v", view)
	}
}
