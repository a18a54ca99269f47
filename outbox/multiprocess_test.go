package outbox_test

import (
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/testkit/smtptest"
	"github.com/postroom/postroom/outbox"
	"github.com/postroom/postroom/sqldb/pgxdb"
)

// holdAt holds the message to one address at the server's end-of-data
// reply: the server has the whole message, the client waits for the
// verdict, so its job is mid-batch for as long as the test needs.
type holdAt struct {
	addr    string
	reached chan struct{}
	open    chan struct{}
	once    sync.Once
}

func (h *holdAt) fault(c smtptest.Command) smtptest.Fault {
	if c.Stage == smtptest.EndOfData && c.Addr == h.addr && c.Attempt == 1 {
		close(h.reached)
		<-h.open
	}
	return smtptest.Fault{}
}

func (h *holdAt) release() { h.once.Do(func() { close(h.open) }) }

// TestMultiProcess runs three worker processes on one PostgreSQL and one
// SMTP server that defers every tenth recipient with 451 on its first two
// attempts, enqueues a 2,000-recipient call once, and SIGKILLs the
// process that is handing over one chosen recipient's message. On the
// server's ledger: every recipient reported sent was accepted exactly
// once, the deferred ones after their retries; only recipients reported
// unknown (the killed process's reserved batches) may have reached the
// server without a sent result; every recipient has exactly one final
// result; every deferred recipient reported sent was accepted on its
// third RCPT; a call enqueued in a transaction that rolled back sent
// nothing; and every process did part of the work.
func TestMultiProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three worker processes and waits for River's rescuer")
	}
	t.Parallel()
	const (
		n         = 2000
		jobSize   = 100
		batchSize = 25
		workers   = 2 // jobs per process at once
		held      = 1050
	)
	pool, dsn := newDB(t)
	bin := buildWorker(t)
	deferred := func(a string) bool {
		return strings.HasSuffix(strings.TrimSuffix(a, "@example.org"), "3")
	}
	hold := &holdAt{addr: addr("multi", held), reached: make(chan struct{}), open: make(chan struct{})}
	var mu sync.Mutex
	rcpts := map[string]int{} // RCPT commands per address
	count := func(c smtptest.Command) smtptest.Fault {
		if c.Stage == smtptest.Rcpt {
			mu.Lock()
			rcpts[c.Addr]++
			mu.Unlock()
		}
		return smtptest.Fault{}
	}
	srv := smtptest.NewServer(t, smtptest.Options{DiscardData: true, Faults: smtptest.Each(count, deferFirst(deferred), hold.fault)})
	defer hold.release() // before the server stops
	var procs []*proc
	for range 3 {
		procs = append(procs, startWorker(t, bin, dsn,
			"-smtp", srv.Addr(), "-batch-size", "25", "-backoff", "10ms",
			"-rescue-after", "5s", "-max-workers", "2"))
	}
	ob, err := outbox.New(smtpMailer(t, srv.Addr(), nil), pgxdb.New(pool), outbox.Options{JobSize: jobSize})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{db: pgxdb.New(pool), pool: pool, srv: srv, ob: ob}
	// A call whose transaction rolls back: the ledger check below fails
	// on any message to its addresses.
	tx, err := pool.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ob.Enqueue(t.Context(), pgxdb.WrapTx(tx), postroom.OpSend, newCall("rolled", 300), outbox.EnqueueOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(t.Context()); err != nil {
		t.Fatal(err)
	}
	call := newCall("multi", n)
	id := e.enqueue(t, postroom.OpSend, call, outbox.EnqueueOptions{})

	select {
	case <-hold.reached:
	case <-t.Context().Done():
		t.Fatal("the held message never reached the server")
	}
	// The worker logged the batch before handing it over; the test reads
	// the workers' logs from pipes, so the line may be a moment behind.
	var killed *proc
	for deadline := time.Now().Add(30 * time.Second); killed == nil && time.Now().Before(deadline); {
		for _, p := range procs {
			for _, b := range p.log.batches() {
				if b[0] <= held && held <= b[1] {
					killed = p
				}
			}
		}
		if killed == nil {
			time.Sleep(10 * time.Millisecond)
		}
	}
	if killed == nil {
		t.Fatal("no process reserved the held recipient")
	}
	if err := killed.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-killed.exited
	killed.exited <- nil // for the cleanup's wait
	hold.release()

	s := waitDone(t, ob, id)
	checkResults(t, e, s, call)
	if r := s.Results[held]; r.Status != postroom.StatusUnknown || r.Code != postroom.ReasonInterrupted {
		t.Errorf("held recipient: %+v, want unknown, interrupted", r)
	}
	unknown := s.Counts[postroom.StatusUnknown]
	if unknown > workers*batchSize {
		t.Errorf("%d unknown, more than the killed process's %d reserved batches of %d", unknown, workers, batchSize)
	}
	if s.Counts[postroom.StatusSent]+unknown != n {
		t.Errorf("counts %v: want every recipient sent or unknown", s.Counts)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, r := range s.Results {
		if r.Status != postroom.StatusSent && r.Status != postroom.StatusUnknown {
			t.Errorf("%s: %+v", r.Email, r)
		}
		if deferred(r.Email) && r.Status == postroom.StatusSent && rcpts[r.Email] != 3 {
			t.Errorf("%s: sent after %d RCPTs, want 3 (two deferred, then accepted)", r.Email, rcpts[r.Email])
		}
	}
	for i, p := range procs {
		if len(p.log.batches()) == 0 {
			t.Errorf("process %d did none of the work", i)
		}
	}
	t.Logf("counts %v; batches per process: %d, %d, %d", s.Counts, len(procs[0].log.batches()), len(procs[1].log.batches()), len(procs[2].log.batches()))
}

// TestGiveUpAfterKill SIGKILLs the worker process in the middle of a
// job's only sending run (Options.MaxAttempts 1): River's rescuer, on a
// second process, hands the job to its last attempt, which gives up. On
// the server's ledger and in Status: the batch recorded before the kill
// is sent, the held message of the batch being handed over unknown
// (interrupted), the others of that batch sent (their outcome written
// while the batch ran), unknown, or rejected (gave-up) if not yet
// reserved, the recipients never tried rejected (gave-up), and none is
// left queued.
func TestGiveUpAfterKill(t *testing.T) {
	if testing.Short() {
		t.Skip("starts worker processes and waits for River's rescuer")
	}
	t.Parallel()
	const (
		n     = 10
		batch = 3
		held  = 4 // in the second batch
	)
	pool, dsn := newDB(t)
	bin := buildWorker(t)
	hold := &holdAt{addr: addr("kill", held), reached: make(chan struct{}), open: make(chan struct{})}
	srv := smtptest.NewServer(t, smtptest.Options{DiscardData: true, Faults: hold.fault})
	defer hold.release() // before the server stops
	args := []string{"-smtp", srv.Addr(), "-batch-size", "3", "-rescue-after", "2s"}
	first := startWorker(t, bin, dsn, args...)

	ob, err := outbox.New(smtpMailer(t, srv.Addr(), nil), pgxdb.New(pool), outbox.Options{JobSize: n, MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{db: pgxdb.New(pool), pool: pool, srv: srv, ob: ob}
	call := newCall("kill", n)
	id := e.enqueue(t, postroom.OpSend, call, outbox.EnqueueOptions{})
	select {
	case <-hold.reached:
	case <-t.Context().Done():
		t.Fatal("the held message never reached the server")
	}
	if err := first.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-first.exited
	first.exited <- nil // for the cleanup's wait
	hold.release()
	startWorker(t, bin, dsn, args...)

	s := waitDone(t, ob, id)
	checkResults(t, e, s, call)
	for i, r := range s.Results {
		switch {
		case i < batch:
			if r.Status != postroom.StatusSent {
				t.Errorf("recipient %d: %+v, want sent before the kill", i, r)
			}
		case i == held:
			if r.Status != postroom.StatusUnknown || r.Code != postroom.ReasonInterrupted {
				t.Errorf("recipient %d: %+v, want unknown, interrupted", i, r)
			}
		case i < 2*batch:
			// Handed over with the held one (sent, or unknown), or not
			// yet reserved when the process died (never sent: gave up);
			// checkResults holds each to the server's ledger.
			switch {
			case r.Status == postroom.StatusSent:
			case r.Status == postroom.StatusUnknown && r.Code == postroom.ReasonInterrupted:
			case r.Status == postroom.StatusRejected && r.Code == outbox.ReasonGaveUp:
			default:
				t.Errorf("recipient %d: %+v, want sent, unknown (interrupted) or rejected (gave-up)", i, r)
			}
		default:
			wantGaveUp(t, i, r, "after 1 failed run of its job", "")
		}
	}
}
