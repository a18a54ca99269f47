package outbox_test

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/testkit/outboxenv"
	"github.com/postroom/postroom/outbox"
	"github.com/postroom/postroom/sqldb"
	"github.com/postroom/postroom/sqldb/pgxdb"
)

// benchRecipients is the size of the benchmarks' call: the spec's limit.
const benchRecipients = 25000

// discard is a transport that accepts every message and keeps nothing.
var discard = postroom.TransportFunc(func(context.Context, *postroom.Envelope) error { return nil })

// BenchmarkSend is the reference: Mailer.Send of the benchmarks' call
// through a discarding transport, in this process.
func BenchmarkSend(b *testing.B) {
	m, err := postroom.New(discard, postroom.Options{Auth: postroom.NoAuth{}})
	if err != nil {
		b.Fatal(err)
	}
	call := newCall("bench", benchRecipients)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.Send(b.Context(), call); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(benchRecipients)*float64(b.N)/b.Elapsed().Seconds(), "recipients/s")
}

// BenchmarkQueue sends the benchmarks' call through the outbox: each
// iteration enqueues it (one transaction) and waits until all its jobs
// have completed, worked by 1 or 3 outboxworker processes (each a River
// client running 4 jobs at once, with a discarding transport, logging at
// INFO as a production worker would, without the outbox's debug record
// of each batch) on one database. Per recipient, db-active-µs is
// PostgreSQL's time executing statements in the benchmark's database (pg_stat_database.active_time,
// which counts a statement's wait for a CPU too: enqueue, River's
// fetches and completions, the outbox's reservations and results, and
// the wait's polling), and db-cpu-µs is the CPU time of the server's
// processes (all of them, read from /proc, when the server runs on this
// machine), and worker-cpu-µs is the CPU time of the worker processes.
// An iteration ends when River has recorded every job completed, which
// its completer does in batches, up to 250 ms after a job's run ended;
// results-sec/op is the time from the start of the enqueue to the end of
// the last job's run (River's finalized_at), when every recipient has
// its final result.
func BenchmarkQueue(b *testing.B) {
	if testing.Short() {
		b.Skip("starts worker processes")
	}
	bin := buildWorker(b)
	for _, procs := range []int{1, 3} {
		b.Run(fmt.Sprintf("processes=%d", procs), func(b *testing.B) {
			pool, dsn := newDB(b)
			pool.Close() // its statistics flushed
			before := activeTime(b, dsn)
			cpuBefore, cpuOK := serverCPU(b, dsn)
			pool, err := pgxpool.New(b.Context(), dsn)
			if err != nil {
				b.Fatal(err)
			}
			defer pool.Close()
			var ps []*proc
			for range procs {
				ps = append(ps, startWorker(b, bin, dsn, "-max-workers", "4", "-log-level", "INFO"))
			}
			workerCPU := func() (d time.Duration) {
				for _, p := range ps {
					if st, ok := procStat(strconv.Itoa(p.cmd.Process.Pid)); ok {
						d += time.Duration(st.utime+st.stime) * clockTick
					}
				}
				return d
			}
			workerBefore := workerCPU()
			m, err := postroom.New(discard, postroom.Options{Auth: postroom.NoAuth{}})
			if err != nil {
				b.Fatal(err)
			}
			ob, err := outbox.New(m, pgxdb.New(pool), outbox.Options{})
			if err != nil {
				b.Fatal(err)
			}
			call := newCall("bench", benchRecipients)
			var untilResults time.Duration
			for b.Loop() {
				start := time.Now()
				err := pgx.BeginFunc(b.Context(), pool, func(tx pgx.Tx) error {
					_, err := ob.Enqueue(b.Context(), pgxdb.WrapTx(tx), postroom.OpSend, call, outbox.EnqueueOptions{})
					return err
				})
				if err != nil {
					b.Fatal(err)
				}
				waitJobs(b, pgxdb.New(pool))
				var end time.Time
				if err := pool.QueryRow(b.Context(), `SELECT max(finalized_at) FROM river_job`).Scan(&end); err != nil {
					b.Fatal(err)
				}
				untilResults += end.Sub(start)
			}
			b.StopTimer()
			elapsed := b.Elapsed()
			workerTime := workerCPU() - workerBefore
			for _, p := range ps {
				stopWorker(b, p)
			}
			pool.Close() // its statistics flushed
			dbTime := activeTime(b, dsn) - before
			n := float64(benchRecipients) * float64(b.N)
			b.ReportMetric(n/elapsed.Seconds(), "recipients/s")
			b.ReportMetric(untilResults.Seconds()/float64(b.N), "results-sec/op")
			b.ReportMetric(float64(dbTime.Microseconds())/n, "db-active-µs/recipient")
			b.ReportMetric(float64(workerTime.Microseconds())/n, "worker-cpu-µs/recipient")
			if cpuAfter, ok := serverCPU(b, dsn); ok && cpuOK {
				b.ReportMetric(float64((cpuAfter-cpuBefore).Microseconds())/n, "db-cpu-µs/recipient")
			}
		})
	}
}

// waitJobs polls River's table until no job is left to complete.
func waitJobs(b *testing.B, q sqldb.Querier) {
	b.Helper()
	for {
		var left int
		if err := q.QueryRow(b.Context(), `SELECT count(*) FROM river_job WHERE state <> 'completed'`).Scan(&left); err != nil {
			b.Fatal(err)
		}
		if left == 0 {
			return
		}
		select {
		case <-b.Context().Done():
			b.Fatal(b.Context().Err())
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// activeTime is pg_stat_database.active_time of dsn's database: the time
// its sessions spent executing statements. A session's share shows once
// it has flushed its statistics, which it does at the latest on exit.
func activeTime(b *testing.B, dsn string) time.Duration {
	b.Helper()
	conn, err := pgx.Connect(b.Context(), dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(context.WithoutCancel(b.Context()))
	var ms float64
	if err := conn.QueryRow(b.Context(), `SELECT coalesce(active_time, 0) FROM pg_stat_database WHERE datname = current_database()`).Scan(&ms); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ms * float64(time.Millisecond))
}

// BenchmarkQueueSQLite is BenchmarkQueue on SQLite: the benchmarks' call
// enqueued (one transaction) into a SQLite file and worked by a River
// client in this process (riversqlite, 4 jobs at once, a discarding
// transport), the one process a SQLite file serves; an iteration ends
// when River has recorded every job completed. results-sec/op is the time
// from the start of the enqueue to the end of the last job's run (River's
// finalized_at, in milliseconds on SQLite).
func BenchmarkQueueSQLite(b *testing.B) {
	db := outboxenv.NewSQLite(b)
	m, err := postroom.New(discard, postroom.Options{Auth: postroom.NoAuth{}})
	if err != nil {
		b.Fatal(err)
	}
	ob, err := outbox.New(m, db, outbox.Options{})
	if err != nil {
		b.Fatal(err)
	}
	client, err := ob.NewClient(&river.Config{
		Logger:            slog.New(slog.DiscardHandler),
		Queues:            map[string]river.QueueConfig{outbox.DefaultQueue: {MaxWorkers: 4}},
		FetchCooldown:     5 * time.Millisecond,
		FetchPollInterval: 50 * time.Millisecond,
	})
	if err != nil {
		b.Fatal(err)
	}
	if err := client.Start(b.Context()); err != nil {
		b.Fatal(err)
	}
	defer client.Stop(context.WithoutCancel(b.Context()))
	call := newCall("bench", benchRecipients)
	var untilResults time.Duration
	for b.Loop() {
		start := time.Now()
		err := sqldb.BeginFunc(b.Context(), db, func(tx sqldb.Tx) error {
			_, err := ob.Enqueue(b.Context(), tx, postroom.OpSend, call, outbox.EnqueueOptions{})
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
		waitJobs(b, db)
		var end time.Time
		if err := db.QueryRow(b.Context(), `SELECT max(finalized_at) FROM river_job`).Scan(&end); err != nil {
			b.Fatal(err)
		}
		untilResults += end.Sub(start)
	}
	b.StopTimer()
	n := float64(benchRecipients) * float64(b.N)
	b.ReportMetric(n/b.Elapsed().Seconds(), "recipients/s")
	b.ReportMetric(untilResults.Seconds()/float64(b.N), "results-sec/op")
}
