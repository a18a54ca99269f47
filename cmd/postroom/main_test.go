package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/goleak"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/testkit/outboxenv"
	"github.com/postroom/postroom/internal/testkit/pgtest"
	"github.com/postroom/postroom/internal/testkit/smtptest"
	"github.com/postroom/postroom/outbox"
	"github.com/postroom/postroom/sqldb/pgxdb"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(pgtest.Main(m)) }

// result is one run of the command.
type result struct {
	stdout, stderr string
	code           int
}

// cmd runs the command line args with POSTROOM_DATABASE_URL set to dsn
// (none when empty); terminal says whether stdout is one.
type cmd struct {
	dsn      string
	terminal bool
}

func (c cmd) run(t *testing.T, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(t.Context(), args, &env{
		stdout: &out, stderr: &errb, terminal: c.terminal,
		getenv: func(k string) string {
			if k == "POSTROOM_DATABASE_URL" {
				return c.dsn
			}
			return ""
		},
	})
	return result{out.String(), errb.String(), code}
}

// ok runs args and fails the test unless the exit status is 0.
func (c cmd) ok(t *testing.T, args ...string) string {
	t.Helper()
	r := c.run(t, args...)
	if r.code != 0 {
		t.Fatalf("postroom %s: exit %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r.stdout
}

// jsonOf runs args with -json and decodes stdout into v.
func (c cmd) jsonOf(t *testing.T, v any, args ...string) {
	t.Helper()
	out := c.ok(t, append(args, "-json")...)
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatalf("postroom %s -json: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// migrated returns a fresh database migrated by the command.
func migrated(t *testing.T) (cmd, *pgxpool.Pool) {
	t.Helper()
	c := cmd{dsn: pgtest.DSN(t)}
	out := c.ok(t, "migrate")
	for _, what := range []string{"outbox", "templates", "suppressions", "events"} {
		if !strings.Contains(out, what) {
			t.Errorf("migrate printed %q, nothing about %s", out, what)
		}
	}
	c.ok(t, "migrate") // again: nothing to do
	pool, err := pgxpool.New(t.Context(), c.dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return c, pool
}

// app is what a test's application does; the zero value sends nothing.
type app struct {
	work               bool          // a River client works the jobs
	slow               time.Duration // the relay's wait before it answers the final dot
	jobSize, batchSize int
}

// worker is an application's outbox sending to a real SMTP server that
// greylists (451 4.7.1 at the first RCPT) the addresses starting with
// "grey", retried after an hour unless retried by hand.
func worker(t *testing.T, pool *pgxpool.Pool, a app) (*outbox.Outbox, *smtptest.Server) {
	t.Helper()
	srv := smtptest.NewServer(t, smtptest.Options{DiscardData: true, Faults: func(c smtptest.Command) smtptest.Fault {
		if c.Stage == smtptest.Rcpt && c.Attempt == 1 && strings.HasPrefix(c.Addr, "grey") {
			return smtptest.Fault{Code: 451, Enhanced: "4.7.1", Text: "greylisted"}
		}
		if c.Stage == smtptest.EndOfData {
			return smtptest.Fault{Delay: a.slow}
		}
		return smtptest.Fault{}
	}})
	ob, err := outbox.New(outboxenv.SMTPMailer(t, srv.Addr(), nil), pgxdb.New(pool), outbox.Options{Backoff: func(int) time.Duration { return time.Hour }, JobSize: a.jobSize, BatchSize: a.batchSize})
	if err != nil {
		t.Fatal(err)
	}
	if a.work {
		outboxenv.StartClient(t, ob, nil)
	}
	return ob, srv
}

func enqueue(t *testing.T, pool *pgxpool.Pool, ob *outbox.Outbox, emails ...string) string {
	t.Helper()
	call := &postroom.Call{Key: "k", AccountID: "shop", Message: postroom.Message{FromEmail: "shop@example.com", Subject: "Order", Text: "Shipped."}}
	for _, e := range emails {
		call.Recipients = append(call.Recipients, postroom.Recipient{Email: e})
	}
	return outboxenv.Enqueue(t, pgxdb.New(pool), ob, postroom.OpSend, call, outbox.EnqueueOptions{})
}
