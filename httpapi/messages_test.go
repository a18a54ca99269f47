package httpapi

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/events"
	"github.com/postroom/postroom/internal/testkit/pgtest"
	"github.com/postroom/postroom/sqldb/pgxdb"
	"github.com/postroom/postroom/suppression"
	"github.com/postroom/postroom/transport"
)

func TestMessagesMemory(t *testing.T) {
	m, err := events.NewMemory(events.MemoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	testMessages(t, m, m.OnEvent, func() {})
}

func TestMessagesSQL(t *testing.T) {
	pool, err := pgxpool.New(t.Context(), pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if err := events.Migrate(t.Context(), pgxdb.New(pool)); err != nil {
		t.Fatal(err)
	}
	s, err := events.NewSQL(pgxdb.New(pool), events.SQLOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := s.NewRecorder(events.RecorderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	testMessages(t, s, rec.OnEvent, func() {
		if err := rec.Flush(t.Context()); err != nil {
			t.Fatal(err)
		}
	})
}

// testMessages sends over HTTP with a Mailer whose events go to onEvent
// (flush writes them), then finds the messages with messages.search and
// messages.info over a.
func testMessages(t *testing.T, a events.Activity, onEvent func(context.Context, postroom.Event), flush func()) {
	list, err := suppression.NewMemory(suppression.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := list.Add(t.Context(), suppression.Entry{AccountID: "acct", Address: "cy@example.com", Reason: postroom.ReasonManual}); err != nil {
		t.Fatal(err)
	}
	mem := transport.NewMemory()
	url, _ := startHandler(t, mem, postroom.Options{Auth: postroom.StaticKeys{"acct": {"k"}, "other": {"k2"}}, Suppressions: list, OnEvent: onEvent}, Options{Activity: a})
	auth := func(kv ...any) map[string]any {
		m := map[string]any{"key": "k", "account_id": "acct"}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	call := smallCall(0)
	call.Recipients = []postroom.Recipient{{Email: "Ann@example.com", Params: map[string]any{"name": "Ann"}}, {Email: "bob@example.com"}, {Email: "cy@example.com"}}
	r := post(t, t.Context(), url+SendPath, "application/json", marshal(t, call))
	if r.Status != http.StatusOK {
		t.Fatalf("send: %d %s", r.Status, r.Body)
	}
	flush()
	ann := r.Results[0].SendID
	if ann == "" || r.Results[2].Status != postroom.StatusRejected {
		t.Fatalf("results %+v", r.Results)
	}

	var found []messageEntry
	postJSON(t, url+MessagesSearchPath, auth("email", "ANN@example.com")).decode(t, http.StatusOK, &found)
	if len(found) != 1 || found[0].ID != ann || found[0].State != "sent" || found[0].Email != "Ann@example.com" ||
		len(found[0].SMTPEvents) != 1 || found[0].SMTPEvents[0].Type != "sent" || len(found[0].Timeline) != 1 || found[0].Timeline[0].Type != postroom.EventSend {
		t.Errorf("search by address: %+v", found)
	}
	if d := time.Since(time.Unix(found[0].TS, 0)); d < 0 || d > time.Hour {
		t.Errorf("ts %d is not now", found[0].TS)
	}
	if f := found[0]; f.Sender != "sender@example.com" || f.Subject != "Hello Ann" || f.Template != nil || len(f.CallID) != 32 {
		t.Errorf("search by address: sender %q, subject %q, template %v, call id %q; want the call's, rendered, null, drawn", f.Sender, f.Subject, f.Template, f.CallID)
	}
	var ofCall []messageEntry
	postJSON(t, url+MessagesSearchPath, auth("call_id", found[0].CallID)).decode(t, http.StatusOK, &ofCall)
	if len(ofCall) != 3 {
		t.Errorf("search by call id: %d messages, want the call's 3", len(ofCall))
	}

	// The whole account, a page at a time: cy (rejected) is in it.
	var all []messageEntry
	cursor := ""
	for pages := 0; pages < 5; pages++ {
		var page []messageEntry
		a := postJSON(t, url+MessagesSearchPath, auth("limit", 1, "cursor", cursor))
		a.decode(t, http.StatusOK, &page)
		all = append(all, page...)
		if cursor = a.next; cursor == "" {
			break
		}
	}
	if len(all) != 3 {
		t.Fatalf("all pages: %+v", all)
	}
	states := map[string]string{}
	for _, m := range all {
		states[m.Email] = m.State
	}
	if states["cy@example.com"] != "rejected" || states["bob@example.com"] != "sent" {
		t.Errorf("states %v", states)
	}
	var rejected []messageEntry
	postJSON(t, url+MessagesSearchPath, auth("state", "rejected", "date_from", time.Now().UTC().Format(time.DateOnly), "date_to", time.Now().UTC().Format(time.DateOnly))).decode(t, http.StatusOK, &rejected)
	if len(rejected) != 1 || rejected[0].Email != "cy@example.com" || rejected[0].ID != "" || rejected[0].Timeline[0].Reason != "manual" {
		t.Errorf("state rejected today: %+v", rejected)
	}
	postJSON(t, url+MessagesSearchPath, auth("date_to", "2001-01-01")).decode(t, http.StatusOK, &rejected)
	if len(rejected) != 0 {
		t.Errorf("before 2001: %+v", rejected)
	}

	var info messageEntry
	postJSON(t, url+MessagesInfoPath, auth("id", ann)).decode(t, http.StatusOK, &info)
	if info.ID != ann || info.State != "sent" {
		t.Errorf("info: %+v", info)
	}
	// Another account's key does not see it.
	postJSON(t, url+MessagesInfoPath, map[string]any{"key": "k2", "account_id": "other", "id": ann}).apiErr(t, http.StatusNotFound, "not_found", "")
	postJSON(t, url+MessagesInfoPath, map[string]any{"key": "k2", "account_id": "acct", "id": ann}).apiErr(t, http.StatusUnauthorized, "invalid_key", "")

	for _, c := range []struct {
		name  string
		path  string
		body  map[string]any
		field string
	}{
		{"unknown state", MessagesSearchPath, auth("state", "lost"), "state"},
		{"bad date", MessagesSearchPath, auth("date_from", "yesterday"), "date_from"},
		{"dates reversed", MessagesSearchPath, auth("date_from", "2026-02-02", "date_to", "2026-01-01"), "date_to"},
		{"negative limit", MessagesSearchPath, auth("limit", -1), "limit"},
		{"bad cursor", MessagesSearchPath, auth("cursor", "x"), "cursor"},
		{"no id", MessagesInfoPath, auth(), "id"},
	} {
		t.Run(c.name, func(t *testing.T) {
			postJSON(t, url+c.path, c.body).apiErr(t, http.StatusBadRequest, "validation_error", c.field)
		})
	}
	postJSON(t, url+MessagesSearchPath, auth("query", "email:ann@example.com")).apiErr(t, http.StatusBadRequest, "invalid_json", "")
}

// TestMessagesNotServed: without Options.Activity the paths are unknown.
func TestMessagesNotServed(t *testing.T) {
	url, _ := startMailer(t, transport.NewMemory(), postroom.Options{})
	postJSON(t, url+MessagesSearchPath, map[string]any{"key": "k", "account_id": "a"}).apiErr(t, http.StatusNotFound, "not_found", "")
}

// TestMessagesContent: messages.content answers the rendered message of a
// send whose body the store kept (events.KeepBodies around the
// transport), byte for byte, to its account only, and 404 for a message
// whose body was not kept.
func TestMessagesContent(t *testing.T) {
	m, err := events.NewMemory(events.MemoryOptions{KeepBodies: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	mem := transport.NewMemory()
	url, _ := startHandler(t, events.KeepBodies(mem, m, events.KeepBodiesOptions{}),
		postroom.Options{Auth: postroom.StaticKeys{"acct": {"k"}, "other": {"k2"}}, OnEvent: m.OnEvent}, Options{Activity: m})
	call := smallCall(0)
	call.Recipients = []postroom.Recipient{{Email: "ann@example.com"}, {Email: "bob@example.com"}}
	r := post(t, t.Context(), url+SendPath, "application/json", marshal(t, call))
	if r.Status != http.StatusOK || len(r.Results) != 2 {
		t.Fatalf("send: %d %s", r.Status, r.Body)
	}
	for _, env := range mem.Envelopes() {
		var got messageContent
		postJSON(t, url+MessagesContentPath, map[string]any{"key": "k", "account_id": "acct", "id": env.SendID}).decode(t, http.StatusOK, &got)
		if got.ID != env.SendID || got.RawMsg != string(env.Data) {
			t.Errorf("messages.content of %s: %q, %d bytes; want the %d bytes delivered", env.SendID, got.ID, len(got.RawMsg), len(env.Data))
		}
		postJSON(t, url+MessagesContentPath, map[string]any{"key": "k2", "account_id": "other", "id": env.SendID}).apiErr(t, http.StatusNotFound, "not_found", "")
	}
	postJSON(t, url+MessagesContentPath, map[string]any{"key": "k", "account_id": "acct", "id": "0123456789abcdef0123456789abcdef"}).apiErr(t, http.StatusNotFound, "not_found", "")
	postJSON(t, url+MessagesContentPath, map[string]any{"key": "k", "account_id": "acct"}).apiErr(t, http.StatusBadRequest, "validation_error", "id")
}
