package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/testkit/outboxenv"
	"github.com/postroom/postroom/internal/testkit/pgtest"
	"github.com/postroom/postroom/internal/testkit/smtptest"
	"github.com/postroom/postroom/outbox"
	"github.com/postroom/postroom/sqldb/pgxdb"
)

// TestCallWaitingRetryWatch follows a call whose relay greylists one
// recipient: call shows it waiting with the relay's reply, retry sends it
// now, and call -watch follows the call to its end with a progress bar.
func TestCallWaitingRetryWatch(t *testing.T) {
	c, pool := migrated(t)
	ob, srv := worker(t, pool, app{work: true})
	id := enqueue(t, pool, ob, "ann@example.org", "grey@example.org")

	var view struct {
		State   string                    `json:"state"`
		Counts  map[string]int            `json:"counts"`
		Waiting []outbox.WaitingRecipient `json:"waiting"`
	}
	for {
		view.State, view.Counts, view.Waiting = "", nil, nil // each poll decodes afresh
		c.jsonOf(t, &view, "call", id)
		// Half done: ann's result written as well as grey's deferral (a
		// batch's results may be written one after the other).
		if len(view.Waiting) == 1 && view.Waiting[0].State == outbox.WaitingDeferred && view.Waiting[0].NextAttempt != nil && view.Counts["sent"] == 1 {
			break
		}
		select {
		case <-t.Context().Done():
			t.Fatalf("never one recipient sent and one deferred: %+v", view)
		case <-time.After(20 * time.Millisecond):
		}
	}
	w := view.Waiting[0]
	if view.State == "done" || view.Counts["sent"] != 1 || view.Counts["queued"] != 1 || w.Index != 1 || w.Email != "grey@example.org" ||
		!strings.Contains(w.LastReason, "greylisted") || w.Attempts != 1 {
		t.Errorf("call: %+v", view)
	}
	text := c.ok(t, "call", id)
	if !strings.Contains(text, "grey@example.org deferred: soft-bounce") || !strings.Contains(text, "next ") {
		t.Errorf("call printed:\n%s", text)
	}

	if text := c.ok(t, "call", id, "-waiting", "0"); !strings.Contains(text, "and 1 more") || strings.Contains(text, "grey@") {
		t.Errorf("call -waiting 0 printed:\n%s", text)
	}

	var calls struct {
		Calls []outbox.CallSummary `json:"calls"`
	}
	c.jsonOf(t, &calls, "calls", "-account", "shop")
	if len(calls.Calls) != 1 || calls.Calls[0].ID != id || calls.Calls[0].Recipients != 2 {
		t.Errorf("calls: %+v", calls)
	}

	// call -watch follows the call from half done to done, which retry
	// brings about while it watches.
	term := cmd{dsn: c.dsn, terminal: true}
	watched := make(chan string, 1)
	go func() { watched <- term.run(t, "call", id, "-watch", "-interval", "20ms").stdout }()
	time.Sleep(100 * time.Millisecond) // let it draw the half-done bar: not required for the test to pass
	if out := c.ok(t, "retry", id); !strings.Contains(out, "1 deferred") {
		t.Errorf("retry printed %q", out)
	}
	out := <-watched
	if !strings.Contains(out, "100%") || !strings.Contains(out, "(2/2") || !strings.Contains(out, "done; sent 2") {
		t.Errorf("call -watch printed:\n%s", out)
	}
	t.Logf("call -watch on a terminal:\n%q", out)
	var done postroom.CallStatus
	c.jsonOf(t, &done, "call", id)
	smtptest.CheckLedger(t, srv, done.Results)
}

func TestCancel(t *testing.T) {
	c, pool := migrated(t)
	ob, _ := worker(t, pool, app{}) // no worker: the call stays queued
	id := enqueue(t, pool, ob, "a@example.org", "b@example.org", "c@example.org")
	var got struct{ Canceled int }
	c.jsonOf(t, &got, "cancel", id, "-reason", "wrong price")
	if got.Canceled != 3 {
		t.Errorf("cancel: %+v, want 3", got)
	}
	s, err := ob.Status(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range s.Results {
		if r.Status != postroom.StatusRejected || r.Code != outbox.ReasonCallCanceled || r.Reason != "call-canceled: wrong price" {
			t.Errorf("%+v", r)
		}
	}
	// The call is done now: cancelling it again says so.
	if out := c.ok(t, "cancel", id); out != "call "+id+": already done (rejected 3): nothing to cancel\n" {
		t.Errorf("second cancel printed %q", out)
	}
	var again struct {
		Canceled int
		Done     bool
		Counts   map[string]int
	}
	c.jsonOf(t, &again, "cancel", id)
	if again.Canceled != 0 || !again.Done || again.Counts["rejected"] != 3 {
		t.Errorf("second cancel -json: %+v, want done, rejected 3", again)
	}
}

// TestCallNotFound: call, cancel and retry of an unknown id say so in
// one line, naming the id, without the packages' prefixes.
func TestCallNotFound(t *testing.T) {
	c, _ := migrated(t)
	for _, command := range []string{"call", "cancel", "retry"} {
		r := c.run(t, command, "nope")
		if want := "postroom " + command + ": no call nope in this database\n"; r.code != 1 || r.stderr != want {
			t.Errorf("%s of an unknown call: exit %d, stderr %q; want 1, %q", command, r.code, r.stderr, want)
		}
	}
}

// TestNotMigrated: every command that reads the database, run on one not
// migrated, says to run postroom migrate, and works once it has run.
func TestNotMigrated(t *testing.T) {
	c := cmd{dsn: pgtest.DSN(t)}
	cases := [][]string{
		{"calls", "-account", "shop"},
		{"call", "some-id"},
		{"cancel", "some-id"},
		{"retry", "some-id"},
		{"rejects", "list", "-account", "shop"},
		{"rejects", "add", "-account", "shop", "-email", "ann@example.org"},
		{"templates", "list", "-account", "shop"},
		{"templates", "info", "-account", "shop", "-name", "welcome"},
	}
	for _, args := range cases {
		r := c.run(t, args...)
		if want := "postroom " + args[0] + ": " + notMigratedLine + "\n"; r.code != 1 || r.stderr != want {
			t.Errorf("postroom %s: exit %d, stderr %q; want 1, %q", strings.Join(args, " "), r.code, r.stderr, want)
		}
	}
	c.ok(t, "migrate")
	c.ok(t, "calls", "-account", "shop")
	c.ok(t, "rejects", "list", "-account", "shop")
	c.ok(t, "templates", "list", "-account", "shop")
}

// TestHelp: every command and subcommand takes -h: it prints its usage
// and exits 0, with no database.
func TestHelp(t *testing.T) {
	for _, args := range [][]string{
		{"migrate"}, {"calls"}, {"call"}, {"cancel"}, {"retry"},
		{"rejects"}, {"rejects", "list"}, {"rejects", "add"}, {"rejects", "delete"},
		{"templates"}, {"templates", "add"}, {"templates", "update"}, {"templates", "publish"},
		{"templates", "list"}, {"templates", "info"}, {"templates", "render"}, {"templates", "delete"},
		{"preview"}, {"send"},
	} {
		for _, h := range []string{"-h", "-help", "--help"} {
			r := cmd{}.run(t, append(args, h)...)
			if want := "usage: postroom " + strings.Join(args, " "); r.code != 0 || !strings.HasPrefix(r.stderr, want) || r.stdout != "" {
				t.Errorf("postroom %s %s: exit %d, stderr %q; want 0 and %q", strings.Join(args, " "), h, r.code, r.stderr, want)
			}
		}
	}
	for name := range commands {
		if r := (cmd{}).run(t, name, "-h"); r.code != 0 {
			t.Errorf("postroom %s -h: exit %d, stderr %q", name, r.code, r.stderr)
		}
	}
}

func TestCommandLine(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		code int
		says string
	}{
		{"no command", nil, 2, "usage"},
		{"unknown", []string{"frobnicate"}, 2, `unknown command "frobnicate"`},
		{"no database", []string{"calls", "-account", "a"}, 2, "POSTROOM_DATABASE_URL"},
		{"no account", []string{"calls"}, 2, "-account is required"},
		{"call without id", []string{"call"}, 2, "want 1 argument"},
		{"bad flag", []string{"retry", "-x", "id"}, 2, "flag provided but not defined"},
		{"rejects without verb", []string{"rejects"}, 2, "want list, add or delete"},
		{"help", []string{"call", "-h"}, 0, "-watch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := cmd{}.run(t, tc.args...)
			if r.code != tc.code || !strings.Contains(r.stderr, tc.says) {
				t.Errorf("exit %d, stderr %q; want %d and %q", r.code, r.stderr, tc.code, tc.says)
			}
		})
	}
	t.Run("flag overrides the environment", func(t *testing.T) {
		r := cmd{dsn: "postgres://nobody@127.0.0.1:1/none"}.run(t, "calls", "-account", "a", "-database-url", pgtest.DSN(t))
		if r.code != 1 || r.stderr != "postroom calls: "+notMigratedLine+"\n" {
			// The flag's database, fresh and not migrated, is reached.
			t.Errorf("%+v", r)
		}
	})
}

// TestCancelInFlight cancels a call while its job hands messages to a
// slow relay, some of them greylisted: cancel waits for the recipients
// being sent, then cancels those deferred meanwhile, and the call ends
// with every recipient final and the relay's ledger in agreement.
func TestCancelInFlight(t *testing.T) {
	c, pool := migrated(t)
	ob, srv := worker(t, pool, app{work: true, slow: 300 * time.Millisecond, batchSize: 2})
	var emails []string
	for i := range 12 {
		prefix := "ok"
		if i%2 == 1 {
			prefix = "grey"
		}
		emails = append(emails, fmt.Sprintf("%s-%d@example.org", prefix, i))
	}
	id := enqueue(t, pool, ob, emails...)
	for {
		var reserved int
		if err := pool.QueryRow(t.Context(), `SELECT count(*) FROM postroom_outbox_recipients WHERE call_id = $1 AND status = 'reserved'`, id).Scan(&reserved); err != nil {
			t.Fatal(err)
		}
		if reserved > 0 {
			break
		}
		select {
		case <-t.Context().Done():
			t.Fatal("nothing reserved")
		case <-time.After(5 * time.Millisecond):
		}
	}
	var got struct{ Canceled, Sending int }
	c.jsonOf(t, &got, "cancel", id, "-wait", "1m")
	if got.Sending != 0 || got.Canceled == 0 {
		t.Errorf("cancel: %+v", got)
	}
	s, err := ob.Status(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if s.State != postroom.CallDone {
		t.Fatalf("call not done after cancel: %v", s.Counts)
	}
	smtptest.CheckLedger(t, srv, s.Results)
	t.Logf("counts %v", s.Counts)
}

// TestCallsList: calls and call name a list call's list, in text and in
// JSON, and nothing for a transactional call.
func TestCallsList(t *testing.T) {
	c, pool := migrated(t)
	ob, _ := worker(t, pool, app{}) // no worker: the calls stay queued
	receipt := enqueue(t, pool, ob, "ann@example.org")
	call := &postroom.Call{Key: "k", AccountID: "shop", Message: postroom.Message{FromEmail: "shop@example.com", Subject: "News", Text: "New in.",
		Headers: []postroom.Header{postroom.ListID("Shop news", "News.Shop.Example.com")}}}
	call.Recipients = []postroom.Recipient{{Email: "ann@example.org"}, {Email: "bob@example.org"}}
	news := outboxenv.Enqueue(t, pgxdb.New(pool), ob, postroom.OpSend, call, outbox.EnqueueOptions{})

	lines := map[string]string{}
	for line := range strings.Lines(c.ok(t, "calls", "-account", "shop")) {
		id, _, _ := strings.Cut(line, " ")
		lines[id] = line
	}
	if l := lines[news]; !strings.HasSuffix(l, "2 recipients: queued 2; list news.shop.example.com\n") {
		t.Errorf("calls printed the list call as %q", l)
	}
	if l := lines[receipt]; !strings.HasSuffix(l, "1 recipients: queued 1\n") {
		t.Errorf("calls printed the transactional call as %q", l)
	}
	var listed struct {
		Calls []map[string]any `json:"calls"`
	}
	c.jsonOf(t, &listed, "calls", "-account", "shop")
	if len(listed.Calls) != 2 {
		t.Fatalf("calls -json: %v", listed.Calls)
	}
	for _, s := range listed.Calls {
		want, has := any("news.shop.example.com"), true
		if s["id"] == receipt {
			want, has = nil, false
		}
		if got, ok := s["list"]; ok != has || got != want {
			t.Errorf("calls -json: call %v has list %v (%v), want %v", s["id"], got, ok, want)
		}
	}

	if text := c.ok(t, "call", news); !strings.HasPrefix(text, "call "+news+": queued; queued 2; list news.shop.example.com\n") {
		t.Errorf("call printed:\n%s", text)
	}
	if text := c.ok(t, "call", receipt); strings.Contains(text, "list") {
		t.Errorf("call printed a list for a transactional call:\n%s", text)
	}
	for id, want := range map[string]string{news: "news.shop.example.com", receipt: ""} {
		var view struct {
			ID   string  `json:"id"`
			List *string `json:"list"`
		}
		c.jsonOf(t, &view, "call", id)
		if got := view.List; (got == nil) != (want == "") || got != nil && *got != want {
			t.Errorf("call -json %s: list %v, want %q (absent when empty)", id, got, want)
		}
	}
}
