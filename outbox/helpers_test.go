package outbox_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"go.uber.org/goleak"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/pgtest"
	"github.com/postroom/postroom/internal/smtptest"
	"github.com/postroom/postroom/outbox"
	"github.com/postroom/postroom/transport"
)

// TestMain runs the tests with pgtest's server, stops it, then checks
// that no goroutine is left.
func TestMain(m *testing.M) { goleak.VerifyTestMain(pgtest.Main(m)) }

// env is one test's outbox: a migrated database, an SMTP test server, a
// Mailer delivering to it and a started River client working the jobs.
type env struct {
	pool *pgxpool.Pool
	srv  *smtptest.Server
	ob   *outbox.Outbox
}

// setup is what a test sets of its env; the zero value is the defaults.
type setup struct {
	faults func(smtptest.Command) smtptest.Fault
	opts   outbox.Options
	auth   postroom.Authenticator
	noWork bool // no River client: nothing is sent
}

// newPool opens a pool on a fresh migrated database.
func newPool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	pool, _ := newDB(t)
	return pool
}

// newDB opens a pool on a fresh migrated database, and returns its DSN
// for other processes.
func newDB(t testing.TB) (*pgxpool.Pool, string) {
	t.Helper()
	dsn := pgtest.DSN(t)
	pool, err := pgxpool.New(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if err := outbox.Migrate(t.Context(), pool); err != nil {
		t.Fatal(err)
	}
	return pool, dsn
}

// smtpMailer is a Mailer delivering to addr over plain SMTP, with no
// retry of its own: a deferral comes back to the outbox.
func smtpMailer(t testing.TB, addr string, auth postroom.Authenticator) *postroom.Mailer {
	t.Helper()
	tr, err := transport.NewSMTP(transport.SMTPOptions{Addr: addr, TLS: transport.NoTLS, Retry: transport.RetryPolicy{Attempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	if auth == nil {
		auth = postroom.NoAuth{}
	}
	m, err := postroom.New(tr, postroom.Options{Auth: auth})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func newEnv(t *testing.T, s setup) *env {
	t.Helper()
	e := &env{pool: newPool(t)}
	e.srv = smtptest.NewServer(t, smtptest.Options{Faults: s.faults, DiscardData: true})
	ob, err := outbox.New(smtpMailer(t, e.srv.Addr(), s.auth), e.pool, s.opts)
	if err != nil {
		t.Fatal(err)
	}
	e.ob = ob
	if s.noWork {
		return e
	}
	startClient(t, ob)
	return e
}

// startClient starts a River client working ob's queue until the test
// ends, and returns it. A failed run is retried at once (retryAtOnce):
// no test waits for River's default retry policy.
func startClient(t *testing.T, ob *outbox.Outbox) *river.Client[pgx.Tx] {
	t.Helper()
	client, err := ob.NewClient(&river.Config{
		Logger:            slog.New(slog.DiscardHandler),
		FetchCooldown:     5 * time.Millisecond,
		FetchPollInterval: 20 * time.Millisecond,
		RetryPolicy:       retryAtOnce(river.Job[outbox.SendArgs]{}.JobRow),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := client.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := client.Stop(ctx); err != nil {
			t.Error(err)
		}
	})
	return client
}

// retryNow is a river.ClientRetryPolicy that retries a failed job at
// once. Its method takes River's *rivertype.JobRow; retryAtOnce infers
// that type from a value, so that the tests need not import rivertype.
type retryNow[J any] struct{}

func (retryNow[J]) NextRetry(J) time.Time { return time.Now() }

func retryAtOnce[J any](J) retryNow[J] { return retryNow[J]{} }

// waitJobsEnded polls River's jobs until none is left to run (each is
// completed, cancelled or discarded), or the test's deadline.
func waitJobsEnded(t testing.TB, pool *pgxpool.Pool) {
	t.Helper()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		var left int
		if err := pool.QueryRow(t.Context(), `SELECT count(*) FROM river_job
			WHERE state NOT IN ('completed', 'cancelled', 'discarded')`).Scan(&left); err != nil {
			t.Fatal(err)
		}
		if left == 0 {
			return
		}
		select {
		case <-t.Context().Done():
			t.Fatalf("%d jobs left", left)
		case <-tick.C:
		}
	}
}

// enqueue enqueues call in a transaction of its own and commits it.
func (e *env) enqueue(t *testing.T, op postroom.Operation, call *postroom.Call, eo outbox.EnqueueOptions) string {
	t.Helper()
	var id string
	err := pgx.BeginFunc(t.Context(), e.pool, func(tx pgx.Tx) error {
		var err error
		id, err = e.ob.Enqueue(t.Context(), tx, op, call, eo)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// wait polls the call's status until it is done, or the test's deadline.
func (e *env) wait(t testing.TB, id string) *postroom.CallStatus {
	t.Helper()
	return waitDone(t, e.ob, id)
}

func waitDone(t testing.TB, ob *outbox.Outbox, id string) *postroom.CallStatus {
	t.Helper()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		s, err := ob.Status(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		if s.State == postroom.CallDone {
			return s
		}
		select {
		case <-t.Context().Done():
			t.Fatalf("call %s not done: %v", id, s.Counts)
		case <-tick.C:
		}
	}
}

// newCall is a message.send call to the addresses prefix-0 … prefix-(n-1)
// at example.org.
func newCall(prefix string, n int) *postroom.Call {
	call := &postroom.Call{
		Key: "k", AccountID: "acct",
		Message: postroom.Message{FromEmail: "shop@example.com", Subject: "Order {{n}}", Text: "Your order {{n}} has shipped."},
	}
	for i := range n {
		call.Recipients = append(call.Recipients, postroom.Recipient{Email: addr(prefix, i), Params: map[string]any{"n": i}})
	}
	return call
}

func addr(prefix string, i int) string { return fmt.Sprintf("%s-%d@example.org", prefix, i) }

// deferFirst is a script that defers (451 at RCPT) the first two attempts
// of the recipients for which pick is true.
func deferFirst(pick func(addr string) bool) func(smtptest.Command) smtptest.Fault {
	return func(c smtptest.Command) smtptest.Fault {
		if c.Stage == smtptest.Rcpt && c.Attempt <= 2 && pick(c.Addr) {
			return smtptest.Fault{Code: 451, Enhanced: "4.3.0", Text: "try again later"}
		}
		return smtptest.Fault{}
	}
}

// clock is a settable clock for Options.Now.
type clock struct {
	mu     sync.Mutex
	offset time.Duration
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset += d
}
