package idempotency

import (
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/testkit/pgtest"
	"github.com/postroom/postroom/sqldb/pgxdb"
)

// TestSQLWriteWaitsForTakeover: on PostgreSQL, a holder's write that
// meets a claim taking its key over mid-transaction (the epoch bumped,
// not committed) waits for it, then finds the epoch bumped and writes
// nothing: had it written, the new holder could have missed the
// recipient and sent it again.
func TestSQLWriteWaitsForTakeover(t *testing.T) {
	ctx := t.Context()
	pool := pgtest.NewPool(t)
	db := pgxdb.New(pool)
	if err := Migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	s, err := NewSQL(db, Options{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.Claim(ctx, Key{AccountID: "acct", Key: "k1"}, Hash{1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Release(ctx)
	takeover, err := db.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer takeover.Rollback(ctx)
	if _, err := takeover.Exec(ctx, `UPDATE postroom_idempotency_calls SET epoch = epoch + 1 WHERE id = $1`, c.(*sqlClaim).id); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.HandOver(ctx, 0, "id-0") }()
	for waiting := false; !waiting; {
		select {
		case err := <-done:
			t.Fatalf("HandOver = %v while the takeover was open; want it to wait for it", err)
		default:
		}
		if err := pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock')`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond) // a poll, not a deadline
	}
	if err := takeover.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, errClaimLost) {
		t.Errorf("HandOver after the takeover = %v, want errClaimLost", err)
	}
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM postroom_idempotency_recipients`).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d recipients recorded, %v; want none", n, err)
	}
}

// TestSQLPoolOfTwo: a call holds one connection for its lock and needs
// one more for its record: with a pool of two, a call of four workers
// runs to its end, and its retry replays it.
func TestSQLPoolOfTwo(t *testing.T) {
	ctx := t.Context()
	cfg, err := pgxpool.ParseConfig(pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 2
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	db := pgxdb.New(pool)
	if err := Migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	s, err := NewSQL(db, Options{})
	if err != nil {
		t.Fatal(err)
	}
	tr := newRelay()
	m := newMailer(t, tr, 4)
	call := newCall(addrs(20)...)
	first, err := Run(ctx, s, m, "k1", postroom.OpSend, call)
	if err != nil {
		t.Fatal(err)
	}
	retry, err := Run(ctx, s, m, "k1", postroom.OpSend, call)
	if err != nil {
		t.Fatal(err)
	}
	sameResults(t, retry, first)
	for i, a := range addrs(20) {
		if first[i].Status != postroom.StatusSent || tr.count(a) != 1 {
			t.Errorf("recipient %d: %+v, %d messages; want sent once", i, first[i], tr.count(a))
		}
	}
}
