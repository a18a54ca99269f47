package outbox_test

import (
	"fmt"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/testkit/pgtest"
	"github.com/postroom/postroom/internal/testkit/smtptest"
	"github.com/postroom/postroom/outbox"
	"github.com/postroom/postroom/sqldb/pgxdb"
)

// TestChaos sends a queued call through three worker processes and a
// relay that takes chaosDelay per message, while one process is
// SIGKILLed and replaced, a second SIGKILLed, PostgreSQL restarted
// (down chaosDown) and the relay away (421 to every connection and
// transaction) for chaosAway. Then, on the relay's ledger and the call's
// results: every recipient has one honest final result (a sent one
// accepted exactly once, an unknown one at most once, nothing else ever);
// every interrupted recipient was in a batch of a killed process (none
// is an outcome lost to the restart, whose writes are retried); per kill,
// at most the killed process's connections in flight (chaosWorkers ×
// chaosConcurrency) are unknown without having reached the relay, and at
// most those plus the results of one write interval unknown in all.
func TestChaos(t *testing.T) {
	if testing.Short() {
		t.Skip("starts worker processes and a PostgreSQL of its own, and waits for River's rescuer")
	}
	const (
		n                = 600
		jobSize          = 50
		chaosWorkers     = 2 // jobs per process at once
		chaosConcurrency = 2 // messages a job hands over at once
		chaosConns       = chaosWorkers * chaosConcurrency
		chaosDelay       = 20 * time.Millisecond
		chaosDown        = time.Second
		chaosAway        = time.Second
		stepWait         = 15 * time.Second // the longest a step waits for progress
	)
	pg := pgtest.NewServer(t)
	dsn := pg.DSN(t)
	pool, err := pgxpool.New(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if err := outbox.Migrate(t.Context(), pgxdb.New(pool)); err != nil {
		t.Fatal(err)
	}
	bin := buildWorker(t)

	var away atomic.Bool
	srv := smtptest.NewServer(t, smtptest.Options{DiscardData: true, Faults: func(c smtptest.Command) smtptest.Fault {
		// Away: a new connection is refused at its greeting, and a
		// transaction on an open one at MAIL (421, which the client
		// answers by closing: with Close the reply would overtake
		// go-smtp's buffered replies to the commands pipelined before).
		switch {
		case c.Stage == smtptest.Greeting && away.Load():
			return smtptest.Fault{Code: 421, Enhanced: "4.3.2", Text: "going away", Close: true}
		case c.Stage == smtptest.Mail && away.Load():
			return smtptest.Fault{Code: 421, Enhanced: "4.3.2", Text: "going away"}
		case c.Stage == smtptest.EndOfData:
			return smtptest.Fault{Delay: chaosDelay}
		}
		return smtptest.Fault{}
	}})
	// River's rescuer runs every 30 s; a job whose process was killed in
	// the first seconds is over 12 s old at its second pass, so it is
	// rescued then. A live run is never rescued: it ends within its job
	// timeout (4 s) and the writes of its last results (milliseconds
	// once PostgreSQL is back), and a rescue would fence those writes
	// out. A run that reaches its timeout (a busy machine, PostgreSQL
	// down) ends its messages in flight (the Mailer's own unknown, which
	// the checks below tell from an interrupted one) and leaves the rest
	// to the next run.
	args := []string{"-smtp", srv.Addr(), "-backoff", "10ms", "-rescue-after", "12s", "-job-timeout", "4s",
		"-max-workers", fmt.Sprint(chaosWorkers), "-concurrency", fmt.Sprint(chaosConcurrency),
		"-max-conns", fmt.Sprint(chaosConns)}
	var procs []*proc
	for range 3 {
		procs = append(procs, startWorker(t, bin, dsn, args...))
	}
	ob, err := outbox.New(smtpMailer(t, srv.Addr(), nil), pgxdb.New(pool), outbox.Options{JobSize: jobSize})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{db: pgxdb.New(pool), pool: pool, srv: srv, ob: ob}
	call := newCall("chaos", n)
	id := e.enqueue(t, postroom.OpSend, call, outbox.EnqueueOptions{})

	// Each step waits for the relay to have accepted so many messages,
	// for at most stepWait: the chaos goes on whatever the pace.
	progress := func(accepted int) {
		t.Helper()
		for deadline := time.Now().Add(stepWait); len(srv.Messages()) < accepted && time.Now().Before(deadline); {
			time.Sleep(5 * time.Millisecond)
		}
	}
	var killed []*proc
	kill := func(p *proc) {
		t.Helper()
		if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		<-p.exited
		p.exited <- nil // for the cleanup's wait
		killed = append(killed, p)
	}
	// busy is a process that has started a batch, the first of ps.
	busy := func(ps ...*proc) *proc {
		for deadline := time.Now().Add(stepWait); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			for _, p := range ps {
				if len(p.log.batches()) > 0 {
					return p
				}
			}
		}
		return ps[0]
	}

	progress(60)
	kill(busy(procs[0], procs[1], procs[2]))
	replacement := startWorker(t, bin, dsn, args...)
	var left []*proc
	for _, p := range procs {
		if p != killed[0] {
			left = append(left, p)
		}
	}
	progress(150)
	kill(busy(left...))
	progress(250)
	if err := pg.Restart(chaosDown); err != nil {
		t.Fatal(err)
	}
	progress(350)
	away.Store(true)
	time.Sleep(chaosAway)
	away.Store(false)

	s := waitDone(t, ob, id)
	checkResults(t, e, s, call)

	reached := map[string]bool{}
	for _, m := range srv.Messages() {
		reached[m.To[0]] = true
	}
	inKilledBatch := func(i int) bool {
		for _, p := range killed {
			for _, b := range p.log.batches() {
				if b[0] <= i && i <= b[1] {
					return true
				}
			}
		}
		return false
	}
	var unknown, notReached int
	for i, r := range s.Results {
		switch r.Status {
		case postroom.StatusSent:
			continue
		case postroom.StatusUnknown:
		default:
			t.Errorf("recipient %d: %+v: the relay refused nothing, and every deferral is retried", i, r)
			continue
		}
		if r.Code != postroom.ReasonInterrupted {
			// The Mailer's own unknown (a connection lost after the
			// data): honest by the ledger check, no crash's doing.
			t.Logf("recipient %d: %+v", i, r)
			continue
		}
		unknown++
		if !reached[r.Email] {
			notReached++
		}
		if !inKilledBatch(i) {
			t.Errorf("recipient %d is interrupted, and no killed process had it in a batch: an outcome lost", i)
		}
	}
	kills := len(killed)
	inFlight := chaosConns // the connections in flight per process
	if max := kills * inFlight; notReached > max {
		t.Errorf("%d interrupted recipients never reached the relay, more than %d kills × %d connections in flight", notReached, kills, inFlight)
	}
	// One write interval: each write carries the results known since the
	// last, and the next starts when a connection frees, so at most one
	// result per connection waits for a write.
	written := chaosConns
	if max := kills * (inFlight + written); unknown > max {
		t.Errorf("%d interrupted recipients, more than %d kills × (%d in flight + %d results of one write interval)", unknown, kills, inFlight, written)
	}
	if t.Failed() {
		logJobErrors(t, pool)
	}
	t.Logf("counts %v; %d interrupted, %d of them never reached the relay; batches per process: %d %d %d, replacement %d",
		s.Counts, unknown, notReached, len(procs[0].log.batches()), len(procs[1].log.batches()), len(procs[2].log.batches()), len(replacement.log.batches()))
}

// logJobErrors logs the errors River kept of every job of the queue.
func logJobErrors(t *testing.T, pool *pgxpool.Pool) {
	t.Helper()
	rows, err := pool.Query(t.Context(), `SELECT id, args->>'first', attempt, state, errors::text FROM river_job WHERE errors IS NOT NULL ORDER BY id`)
	if err != nil {
		t.Log(err)
		return
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var first, state, errs string
		var attempt int
		if err := rows.Scan(&id, &first, &attempt, &state, &errs); err != nil {
			t.Log(err)
			return
		}
		t.Logf("job %d (first %s, attempt %d, %s): %s", id, first, attempt, state, errs)
	}
}
