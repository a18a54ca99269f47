package outbox_test

import (
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/outbox"
)

// BenchmarkWaiting reads the waiting recipients of the benchmarks' call
// (25,000 recipients, 50 jobs of 500) when all but 100 of its
// recipients are final and those 100, in the last job, are deferred: the
// worst case for Waiting is a call mostly done, whose waiting chunk it
// decodes, the others skipped.
func BenchmarkWaiting(b *testing.B) {
	pool := newPool(b)
	m, err := postroom.New(discard, postroom.Options{Auth: postroom.NoAuth{}})
	if err != nil {
		b.Fatal(err)
	}
	ob, err := outbox.New(m, pool, outbox.Options{})
	if err != nil {
		b.Fatal(err)
	}
	var id string
	if err := pgx.BeginFunc(b.Context(), pool, func(tx pgx.Tx) error {
		id, err = ob.Enqueue(b.Context(), tx, postroom.OpSend, newCall("bench", benchRecipients), outbox.EnqueueOptions{})
		return err
	}); err != nil {
		b.Fatal(err)
	}
	if _, err := pool.Exec(b.Context(), `INSERT INTO postroom_outbox_results (call_id, first, epoch, idx, status, code, reason, send_id)
		SELECT $1, i / $3 * $3, 0, array_agg(i), array_agg(CASE WHEN i < $2 - 100 THEN 'sent' ELSE 'deferred' END),
			array_agg('soft-bounce'), array_agg('451 4.7.1 greylisted'), array_agg('')
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
		SELECT 'c' || i, 0, 0, array_agg(k), array_agg('sent'), array_agg(''), array_agg(''), array_agg('')
		FROM generate_series(1, 2000, 2) AS i, generate_series(0, 9) AS k GROUP BY i`); err != nil {
		b.Fatal(err)
	}
	m, err := postroom.New(discard, postroom.Options{Auth: postroom.NoAuth{}})
	if err != nil {
		b.Fatal(err)
	}
	ob, err := outbox.New(m, pool, outbox.Options{})
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
