package outbox_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"go.uber.org/goleak"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/testkit/outboxenv"
	"github.com/postroom/postroom/internal/testkit/pgtest"
	"github.com/postroom/postroom/internal/testkit/smtptest"
	"github.com/postroom/postroom/internal/testkit/testenv"
	"github.com/postroom/postroom/outbox"
	"github.com/postroom/postroom/sqldb"
	"github.com/postroom/postroom/sqldb/pgxdb"
)

// TestMain runs the tests with pgtest's server, stops it, removes the
// worker program the process tests built, then checks that no goroutine
// is left. The tests wait on PostgreSQL, River's polling and worker
// processes far more than they compute: 8 run at once unless -parallel
// says otherwise.
func TestMain(m *testing.M) {
	testenv.Parallel(8)
	goleak.VerifyTestMain(afterRun{pgtest.Main(m), removeWorker})
}

// afterRun is a goleak.TestingM that calls after once the tests ran.
type afterRun struct {
	m     goleak.TestingM
	after func()
}

func (a afterRun) Run() int {
	defer a.after()
	return a.m.Run()
}

// env is one test's outbox: a migrated database, an SMTP test server, a
// Mailer delivering to it and a started River client working the jobs.
type env struct {
	db   sqldb.DB
	pool *pgxpool.Pool // PostgreSQL's pool; nil on SQLite
	srv  *smtptest.Server
	ob   *outbox.Outbox
}

// setup is what a test sets of its env; the zero value is the defaults,
// on PostgreSQL.
type setup struct {
	engine outboxenv.Engine // zero: PostgreSQL
	faults func(smtptest.Command) smtptest.Fault
	opts   outbox.Options
	auth   postroom.Authenticator
	noWork bool // no River client: nothing is sent
}

// engines runs test on each engine (PostgreSQL, SQLite) in parallel
// subtests: the queue's contract holds on both.
func engines(t *testing.T, test func(t *testing.T, eng outboxenv.Engine)) {
	t.Helper()
	for _, eng := range outboxenv.Engines() {
		t.Run(eng.Name, func(t *testing.T) {
			t.Parallel()
			test(t, eng)
		})
	}
}

// openDB opens a fresh migrated database of eng (PostgreSQL's when eng
// is zero), and its pool on PostgreSQL.
func openDB(t testing.TB, eng outboxenv.Engine) (sqldb.DB, *pgxpool.Pool) {
	t.Helper()
	if eng.Open == nil || eng.Name == "postgres" {
		pool := newPool(t)
		return pgxdb.New(pool), pool
	}
	return eng.Open(t), nil
}

// newPool opens a pool on a fresh migrated database.
func newPool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	return outboxenv.NewPool(t)
}

// newDB opens a pool on a fresh migrated database, and returns its DSN
// for other processes.
func newDB(t testing.TB) (*pgxpool.Pool, string) {
	t.Helper()
	dsn := outboxenv.DSN(t)
	pool, err := pgxpool.New(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool, dsn
}

// smtpMailer is a Mailer delivering to addr over plain SMTP, with no
// retry of its own: a deferral comes back to the outbox.
func smtpMailer(t testing.TB, addr string, auth postroom.Authenticator) *postroom.Mailer {
	t.Helper()
	return outboxenv.SMTPMailer(t, addr, auth)
}

func newEnv(t *testing.T, s setup) *env {
	t.Helper()
	e := &env{}
	e.db, e.pool = openDB(t, s.engine)
	e.srv = smtptest.NewServer(t, smtptest.Options{Faults: s.faults, DiscardData: true})
	ob, err := outbox.New(smtpMailer(t, e.srv.Addr(), s.auth), e.db, s.opts)
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
func startClient(t *testing.T, ob *outbox.Outbox) *outbox.Client {
	t.Helper()
	return outboxenv.StartClient(t, ob, &river.Config{RetryPolicy: retryAtOnce(river.Job[outbox.SendArgs]{}.JobRow)})
}

// retryNow is a river.ClientRetryPolicy that retries a failed job at
// once. Its method takes River's *rivertype.JobRow; retryAtOnce infers
// that type from a value, so that the tests need not import rivertype.
type retryNow[J any] struct{}

func (retryNow[J]) NextRetry(J) time.Time { return time.Now() }

func retryAtOnce[J any](J) retryNow[J] { return retryNow[J]{} }

// waitJobsEnded polls River's jobs until none is left to run (each is
// completed, cancelled or discarded), or the test's deadline.
func waitJobsEnded(t testing.TB, db sqldb.Querier) {
	t.Helper()
	outboxenv.WaitJobsEnded(t, db)
}

// enqueue enqueues call in a transaction of its own and commits it.
func (e *env) enqueue(t *testing.T, op postroom.Operation, call *postroom.Call, eo outbox.EnqueueOptions) string {
	t.Helper()
	return outboxenv.Enqueue(t, e.db, e.ob, op, call, eo)
}

// wait polls the call's status until it is done, or the test's deadline.
func (e *env) wait(t testing.TB, id string) *postroom.CallStatus {
	t.Helper()
	return waitDone(t, e.ob, id)
}

func waitDone(t testing.TB, ob *outbox.Outbox, id string) *postroom.CallStatus {
	t.Helper()
	return outboxenv.WaitDone(t, ob, id)
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
