package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/events"
	"github.com/postroom/postroom/sqldb"
)

func TestActivity(t *testing.T) { onEngines(t, testActivity) }

func testActivity(t *testing.T, e engine) {
	c := migratedOn(t, e)
	t0 := time.Date(2026, 11, 28, 5, 0, 0, 0, time.UTC)
	id := func(n int) string { return fmt.Sprintf("%032x", n) }
	var err error
	c.withDB(t, func(db sqldb.DB) {
		err = eventsSQL(t, db).Record(t.Context(), []postroom.Event{
			{Type: postroom.EventDeferral, SendID: id(1), AccountID: "shop", Email: "Ann@example.org", Reason: "soft-bounce", Status: "4.2.2", Diagnostic: "452 4.2.2 full\x1b[31m", At: t0},
			{Type: postroom.EventSend, SendID: id(1), AccountID: "shop", Email: "Ann@example.org", At: t0.Add(time.Hour)},
			{Type: postroom.EventHardBounce, SendID: id(1), AccountID: "shop", Email: "Ann@example.org", Reason: "bad-mailbox", Status: "5.1.1", Diagnostic: "550 5.1.1 no such user", At: t0.Add(2 * time.Hour)},
			{Type: postroom.EventSend, SendID: id(2), AccountID: "shop", Email: "ann@example.org", List: "news.shop.example.com", At: t0.Add(3 * time.Hour),
				CallID: "c1", From: "news@shop.example.com", Subject: "Deals\r\nof the week", HTMLTemplateID: "deals", TextTemplateID: "deals-text"},
			{Type: postroom.EventSend, SendID: id(3), AccountID: "other", Email: "ann@example.org", At: t0.Add(3 * time.Hour)},
		})
	})
	if err != nil {
		t.Fatal(err)
	}

	out := c.ok(t, "activity", "-account", "shop", "ANN@example.org")
	want := id(2) + "  ann@example.org  sent  2026-11-28T08:00:00Z; list news.shop.example.com\n" +
		"  call c1; from news@shop.example.com; subject Deals of the week; templates deals, deals-text\n" +
		"  2026-11-28T08:00:00Z  send\n" +
		"\n" +
		id(1) + "  Ann@example.org  bounced  2026-11-28T05:00:00Z\n" +
		"  2026-11-28T05:00:00Z  deferral  soft-bounce  4.2.2  452 4.2.2 full [31m\n" +
		"  2026-11-28T06:00:00Z  send\n" +
		"  2026-11-28T07:00:00Z  hard_bounce  bad-mailbox  5.1.1  550 5.1.1 no such user\n"
	if out != want {
		t.Errorf("activity ADDRESS printed:\n%s\nwant:\n%s", out, want)
	}

	// A page of one, then the next from the printed command.
	out = c.ok(t, "activity", "-account", "shop", "-limit", "1", "ann@example.org")
	_, more, ok := strings.Cut(out, "more: postroom activity ")
	if !strings.HasPrefix(out, id(2)) || !ok {
		t.Fatalf("-limit 1 printed:\n%s", out)
	}
	if out = c.ok(t, append([]string{"activity"}, strings.Fields(more)...)...); !strings.HasPrefix(out, id(1)) || strings.Contains(out, id(2)) || strings.Contains(out, "more:") {
		t.Errorf("the next page printed:\n%s", out)
	}

	var m events.Message
	c.jsonOf(t, &m, "activity", "-account", "shop", strings.ToUpper(id(1)))
	if m.SendID != id(1) || m.State != events.StateBounced || len(m.Timeline) != 3 || m.Timeline[2].Status != "5.1.1" {
		t.Errorf("activity SEND_ID -json: %+v", m)
	}
	var found struct {
		Messages []events.Message
		Next     string
	}
	c.jsonOf(t, &found, "activity", "-account", "shop", "-state", "sent", "ann@example.org")
	if len(found.Messages) != 1 || found.Messages[0].SendID != id(2) || found.Next != "" {
		t.Errorf("-state sent -json: %+v", found)
	}

	if r := c.run(t, "activity", "-account", "shop", id(3)); r.code != 1 || !strings.Contains(r.stderr, "no message "+id(3)+" in account shop") {
		t.Errorf("another account's message: %+v", r)
	}
	if out := c.ok(t, "activity", "-account", "shop", "nobody@example.org"); out != "no messages to nobody@example.org in account shop\n" {
		t.Errorf("an address with no messages: %q", out)
	}
	for _, args := range [][]string{
		{"activity", "ann@example.org"},
		{"activity", "-account", "shop"},
		{"activity", "-account", "shop", "-state", "lost", "ann@example.org"},
		{"activity", "-account", "shop", "-before", "x", "ann@example.org"},
	} {
		if r := c.run(t, args...); r.code != 2 {
			t.Errorf("%q: %+v, want exit 2", args, r)
		}
	}
}
