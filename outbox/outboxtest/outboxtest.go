// Package outboxtest is for the tests of applications that queue mail with
// package outbox: Enqueued shows what a transaction enqueued (calls and
// their recipients, as stored; on PostgreSQL), and RunJobs runs the
// queued work to completion, in the test, with the outbox's real Worker
// on the test's database (PostgreSQL's or SQLite's).
//
// A test of code that enqueues a receipt in the order's transaction:
//
//	tx, _ := pool.Begin(ctx)
//	shop.PlaceOrder(ctx, tx, order)                        // calls ob.Enqueue(ctx, pgxdb.WrapTx(tx), ...)
//	calls, _ := outboxtest.Enqueued(ctx, pgxdb.WrapTx(tx)) // what this transaction enqueued
//	tx.Commit(ctx)
//	outboxtest.RunJobs(ctx, t, ob, pgxdb.New(pool))        // sent through ob's Mailer
//	status, _ := ob.Status(ctx, calls[0].ID)
//
// Give the outbox a Mailer over a postroomtest.Recorder to see the
// messages decoded.
package outboxtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertest"
	"github.com/riverqueue/river/rivertype"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/outbox"
	"github.com/postroom/postroom/sqldb"
)

// Call is a call as the outbox stored it.
type Call struct {
	// ID is the call's id, as Enqueue returned it.
	ID string
	// Operation is the operation it was enqueued as.
	Operation postroom.Operation
	// Call is the call, recipients included, decoded from what was stored
	// (params as JSON gives them back: numbers as float64).
	Call *postroom.Call
	// At is when it is to be sent (EnqueueOptions.At, or when enqueued).
	At time.Time
}

// ErrPostgresOnly: Enqueued was given a SQLite transaction. SQLite keeps
// no record of the transaction that wrote a row: read the Status of the
// ids Enqueue returned instead.
var ErrPostgresOnly = errors.New("outboxtest: Enqueued reads PostgreSQL's transaction ids; on SQLite, read the Status of the ids Enqueue returned")

// Enqueued returns the calls that tx itself enqueued (none of those other
// transactions committed), in the order they were enqueued, read within
// tx before it commits or rolls back. tx is PostgreSQL's (pgxdb.WrapTx of
// the application's pgx.Tx); on SQLite it returns ErrPostgresOnly.
func Enqueued(ctx context.Context, tx sqldb.Tx) ([]Call, error) {
	if tx.Engine() != sqldb.Postgres {
		return nil, ErrPostgresOnly
	}
	// Rows a transaction wrote carry its id as xmin.
	rows, err := tx.Query(ctx, `SELECT id, operation, body, started_at FROM postroom_outbox_calls
		WHERE xmin = pg_current_xact_id()::xid ORDER BY started_at, ctid`)
	if err != nil {
		return nil, fmt.Errorf("outboxtest: Enqueued: %w", err)
	}
	var calls []Call
	defer rows.Close()
	for rows.Next() {
		var c Call
		var op int16
		var body []byte
		if err := rows.Scan(&c.ID, &op, &body, &c.At); err != nil {
			return nil, fmt.Errorf("outboxtest: Enqueued: %w", err)
		}
		c.Operation = postroom.Operation(op)
		c.Call = new(postroom.Call)
		if err := json.Unmarshal(body, c.Call); err != nil {
			return nil, fmt.Errorf("outboxtest: Enqueued: call %s: %w", c.ID, err)
		}
		calls = append(calls, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("outboxtest: Enqueued: %w", err)
	}
	for i := range calls {
		chunks, err := tx.Query(ctx, `SELECT recipients FROM postroom_outbox_chunks WHERE call_id = $1 ORDER BY first`, calls[i].ID)
		if err != nil {
			return nil, fmt.Errorf("outboxtest: Enqueued: %w", err)
		}
		defer chunks.Close()
		for chunks.Next() {
			var data []byte
			var rs []postroom.Recipient
			if err := chunks.Scan(&data); err != nil {
				return nil, fmt.Errorf("outboxtest: Enqueued: %w", err)
			}
			if err := json.Unmarshal(data, &rs); err != nil {
				return nil, fmt.Errorf("outboxtest: Enqueued: call %s: %w", calls[i].ID, err)
			}
			calls[i].Call.Recipients = append(calls[i].Call.Recipients, rs...)
		}
		if err := chunks.Err(); err != nil {
			return nil, fmt.Errorf("outboxtest: Enqueued: %w", err)
		}
	}
	return calls, nil
}

// maxRuns bounds the runs RunJobs gives one job, so that a job that never
// ends fails the test instead of hanging it.
const maxRuns = 1000

// RunJobs runs every job of the outbox that is waiting (available,
// scheduled for later, or to be retried), at once; a job that asks to run
// again (deferred recipients, a snooze) runs again at once, until every
// job has ended (completed, cancelled or discarded: the outbox's last
// attempt gives its recipients a final result). It returns how many runs
// it made. The calls must have been committed. A job still waiting after
// maxRuns runs, or an error of River itself, fails tb.
//
// On PostgreSQL it runs the jobs one after the other, synchronously, each
// in a transaction of its own on db, with ob's Worker under River's
// rivertest. On SQLite, whose one connection a job's transaction would
// hold while the Worker needs it, it starts a River client working ob's
// queue (ob.NewClient), makes each job that waits run now, and stops the
// client when no job is left.
//
// ob's Options.Backoff and River's schedule are not waited for: RunJobs
// is for tests, where what matters is the outcome.
func RunJobs(ctx context.Context, tb testing.TB, ob *outbox.Outbox, db sqldb.DB) int {
	tb.Helper()
	if db.Engine() == sqldb.SQLite {
		return runWithClient(ctx, tb, ob)
	}
	p, ok := db.(interface{ Pool() *pgxpool.Pool })
	if !ok {
		tb.Fatalf("outboxtest: RunJobs: a PostgreSQL DB of type %T has no Pool method (use pgxdb.New)", db)
	}
	pool := p.Pool()
	driver := riverpgxv5.New(pool)
	client, err := river.NewClient(driver, &river.Config{})
	if err != nil {
		tb.Fatalf("outboxtest: RunJobs: %v", err)
	}
	worker := rivertest.NewWorker(tb, driver, &river.Config{}, ob.Worker())
	runs := map[int64]int{}
	total := 0
	for {
		list, err := client.JobList(ctx, river.NewJobListParams().
			Kinds(outbox.SendArgs{}.Kind()).
			States(rivertype.JobStateAvailable, rivertype.JobStateScheduled, rivertype.JobStateRetryable).
			First(100))
		if err != nil {
			tb.Fatalf("outboxtest: RunJobs: listing jobs: %v", err)
		}
		if len(list.Jobs) == 0 {
			return total
		}
		for _, job := range list.Jobs {
			if runs[job.ID]++; runs[job.ID] > maxRuns {
				tb.Fatalf("outboxtest: RunJobs: job %d (call %s) still %s after %d runs", job.ID, callOf(job), job.State, maxRuns)
			}
			tx, err := pool.Begin(ctx)
			if err != nil {
				tb.Fatalf("outboxtest: RunJobs: %v", err)
			}
			// An error is the run's (the Worker's: River has made the job
			// retryable or discarded it), to be committed as River would.
			if _, err := worker.WorkJob(ctx, tb, tx, job); err != nil {
				tb.Logf("outboxtest: RunJobs: job %d (call %s), run %d: %v", job.ID, callOf(job), runs[job.ID], err)
			}
			if err := tx.Commit(ctx); err != nil {
				tb.Fatalf("outboxtest: RunJobs: job %d (call %s): %v", job.ID, callOf(job), err)
			}
			total++
		}
	}
}

// callOf is the call id of job's args, for a failure's text.
func callOf(job *rivertype.JobRow) string {
	var args outbox.SendArgs
	if json.Unmarshal(job.EncodedArgs, &args) != nil {
		return "?"
	}
	return args.CallID
}

// runWithClient is RunJobs with a River client of ob's (SQLite's way).
func runWithClient(ctx context.Context, tb testing.TB, ob *outbox.Outbox) int {
	tb.Helper()
	client, err := ob.NewClient(&river.Config{
		Logger:            slog.New(slog.DiscardHandler),
		FetchCooldown:     5 * time.Millisecond,
		FetchPollInterval: 20 * time.Millisecond,
		TestOnly:          true,
	})
	if err != nil {
		tb.Fatalf("outboxtest: RunJobs: %v", err)
	}
	rc := client.SQLite()
	events, cancel := rc.Subscribe(river.EventKindJobCompleted, river.EventKindJobFailed,
		river.EventKindJobSnoozed, river.EventKindJobCancelled)
	defer cancel()
	if err := client.Start(ctx); err != nil {
		tb.Fatalf("outboxtest: RunJobs: %v", err)
	}
	defer func() {
		if err := client.Stop(context.WithoutCancel(ctx)); err != nil {
			tb.Errorf("outboxtest: RunJobs: stopping River's client: %v", err)
		}
	}()
	runs := map[int64]int{}
	total := 0
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		list, err := rc.JobList(ctx, river.NewJobListParams().
			Kinds(outbox.SendArgs{}.Kind()).
			States(rivertype.JobStateAvailable, rivertype.JobStateScheduled, rivertype.JobStateRetryable,
				rivertype.JobStateRunning, rivertype.JobStatePending).
			First(100))
		if err != nil {
			tb.Fatalf("outboxtest: RunJobs: listing jobs: %v", err)
		}
		if len(list.Jobs) == 0 {
			for {
				select {
				case <-events:
					total++
				default:
					return total
				}
			}
		}
		for _, job := range list.Jobs {
			if job.State == rivertype.JobStateScheduled || job.State == rivertype.JobStateRetryable {
				if _, err := rc.JobRetry(ctx, job.ID); err != nil {
					tb.Fatalf("outboxtest: RunJobs: job %d (call %s): %v", job.ID, callOf(job), err)
				}
			}
		}
		for waiting := true; waiting; {
			select {
			case ev := <-events:
				total++
				if runs[ev.Job.ID]++; runs[ev.Job.ID] > maxRuns {
					tb.Fatalf("outboxtest: RunJobs: job %d (call %s) still %s after %d runs", ev.Job.ID, callOf(ev.Job), ev.Job.State, maxRuns)
				}
			case <-tick.C:
				waiting = false
			case <-ctx.Done():
				tb.Fatalf("outboxtest: RunJobs: %v", ctx.Err())
			}
		}
	}
}
