package outbox_test

import (
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/outbox"
	"github.com/postroom/postroom/sqldb/pgxdb"
)

// benchCall enqueues the benchmarks' call (25,000 recipients, 50 jobs of
// 500) in a database of its own, with no worker: the benchmark writes its
// results.
func benchCall(b *testing.B) (*pgxpool.Pool, *outbox.Outbox, string) {
	pool := newPool(b)
	m, err := postroom.New(discard, postroom.Options{Auth: postroom.NoAuth{}})
	if err != nil {
		b.Fatal(err)
	}
	ob, err := outbox.New(m, pgxdb.New(pool), outbox.Options{})
	if err != nil {
		b.Fatal(err)
	}
	var id string
	if err := pgx.BeginFunc(b.Context(), pool, func(tx pgx.Tx) error {
		id, err = ob.Enqueue(b.Context(), pgxdb.WrapTx(tx), postroom.OpSend, newCall("bench", benchRecipients), outbox.EnqueueOptions{})
		return err
	}); err != nil {
		b.Fatal(err)
	}
	return pool, ob, id
}

// BenchmarkWaiting reads the waiting recipients of the benchmarks' call
// (25,000 recipients, 50 jobs of 500) when all but 100 of its
// recipients are final and those 100, in the last job, are deferred: the
// worst case for Waiting is a call mostly done, whose waiting chunk it
// decodes, the others skipped.
func BenchmarkWaiting(b *testing.B) {
	pool, ob, id := benchCall(b)
	if _, err := pool.Exec(b.Context(), `INSERT INTO postroom_outbox_results (call_id, first, epoch, idx, status, code, reason, send_id)
		SELECT $1, i / $3 * $3, 0, array_agg(i), array_agg(CASE WHEN i < $2 - 100 THEN 'sent' ELSE 'deferred' END),
			array_agg('soft-bounce'::text), array_agg('451 4.7.1 greylisted'::text), array_agg(''::text)
		FROM generate_series(0, $2 - 1) AS i GROUP BY i / $3`, id, benchRecipients, outbox.DefaultJobSize); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		w, err := ob.Waiting(b.Context(), id)
		if err != nil || len(w) != 100 {
			b.Fatalf("%d waiting, %v", len(w), err)
		}
	}
}

// BenchmarkCalls lists the newest 50 of an account's 2,000 calls of 10
// recipients each, half of them with final results.
func BenchmarkCalls(b *testing.B) {
	pool := newPool(b)
	if _, err := pool.Exec(b.Context(), `INSERT INTO postroom_outbox_calls (id, account_id, request_hash, operation, body, recipients, started_at)
		SELECT 'c' || i, 'acct', '\x00', 0, '{}', 10, now() - i * interval '1 second' FROM generate_series(1, 2000) AS i`); err != nil {
		b.Fatal(err)
	}
	if _, err := pool.Exec(b.Context(), `INSERT INTO postroom_outbox_results (call_id, first, epoch, idx, status, code, reason, send_id)
		SELECT 'c' || i, 0, 0, array_agg(k), array_agg('sent'::text), array_agg(''::text), array_agg(''::text), array_agg(''::text)
		FROM generate_series(1, 2000, 2) AS i, generate_series(0, 9) AS k GROUP BY i`); err != nil {
		b.Fatal(err)
	}
	m, err := postroom.New(discard, postroom.Options{Auth: postroom.NoAuth{}})
	if err != nil {
		b.Fatal(err)
	}
	ob, err := outbox.New(m, pgxdb.New(pool), outbox.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		calls, _, err := ob.Calls(b.Context(), outbox.CallsQuery{AccountID: "acct"})
		if err != nil || len(calls) != outbox.DefaultCallsLimit {
			b.Fatalf("%d calls, %v", len(calls), err)
		}
	}
}

// BenchmarkStatus reads the status of the benchmarks' call (25,000
// recipients, 50 jobs of 500) once it is done: every recipient sent, its
// results written as a job writes them, a reservation and a result per
// batch of 100, and Status's answer holds all 25,000 results.
func BenchmarkStatus(b *testing.B) {
	pool, ob, id := benchCall(b)
	if _, err := pool.Exec(b.Context(), `INSERT INTO postroom_outbox_results (call_id, first, epoch, idx, status, code, reason, send_id)
		SELECT $1, w.i / 100 * 100 / $3 * $3, 1, array_agg(w.i ORDER BY w.i),
			array_agg(CASE WHEN w.done THEN 'sent' ELSE 'reserved' END ORDER BY w.i),
			NULL, NULL, CASE WHEN w.done THEN array_agg('0123456789abcdef0123456789-' || w.i ORDER BY w.i) END
		FROM (SELECT i, done FROM generate_series(0, $2 - 1) AS i, (VALUES (false), (true)) AS d(done)) w
		GROUP BY w.i / 100, w.done ORDER BY w.i / 100, w.done`, id, benchRecipients, outbox.DefaultJobSize); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		s, err := ob.Status(b.Context(), id)
		if err != nil || s.State != postroom.CallDone || len(s.Results) != benchRecipients {
			b.Fatalf("%v, %v", s, err)
		}
	}
}
