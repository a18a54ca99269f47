package outbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/testkit/dbtest"
	"github.com/postroom/postroom/sqldb"
)

// countingPool counts the writes a lease makes through a real database.
type countingPool struct {
	sqldb.DB
	reserves atomic.Int64
}

func (c *countingPool) count(sql string) {
	if sql == putSQL {
		c.reserves.Add(1)
	}
}

func (c *countingPool) QueryRow(ctx context.Context, sql string, args ...any) sqldb.Row {
	c.count(sql)
	return c.DB.QueryRow(ctx, sql, args...)
}

func (c *countingPool) Query(ctx context.Context, sql string, args ...any) (sqldb.Rows, error) {
	c.count(sql)
	return c.DB.Query(ctx, sql, args...)
}

func (c *countingPool) Exec(ctx context.Context, sql string, args ...any) (int64, error) {
	c.count(sql)
	return c.DB.Exec(ctx, sql, args...)
}

// TestHandoverSlowTransport runs one batch through a transport that
// takes a few milliseconds a message, with more Mailer workers than
// connections: every message is reserved before it is handed over, and
// the recipients reserved whose message has not reached the transport
// are never more than the other connections' messages (a message waiting
// for a connection is not reserved), and every result is written.
func TestHandoverSlowTransport(t *testing.T) {
	const (
		n           = 40
		concurrency = 4
		conns       = 2
	)
	ctx := t.Context()
	pool := migratedPostgres(t, n)
	cp := &countingPool{DB: pool}
	l, err := takeLease(ctx, cp, SendArgs{CallID: "c", First: 0, Count: n})
	if err != nil {
		t.Fatal(err)
	}

	// The transport checks that each message's recipient is reserved
	// when it gets the message, and counts the recipients reserved whose
	// message it has not got (yet).
	var unreserved atomic.Int64
	var mu sync.Mutex
	reached := map[string]bool{}
	ahead := 0                     // the most reserved recipients not at the transport, at once
	var sending, most atomic.Int64 // messages at the transport now, and at most
	m, err := postroom.New(postroom.TransportFunc(func(ctx context.Context, env *postroom.Envelope) error {
		if k := sending.Add(1); k > most.Load() {
			most.Store(k) // a race between two stores keeps one count seen
		}
		defer sending.Add(-1)
		mu.Lock()
		reached[env.To[0]] = true
		mu.Unlock()
		rows, err := pool.Query(ctx, `SELECT idx, status FROM postroom_outbox_recipients`)
		if err != nil {
			return err
		}
		defer rows.Close()
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for rows.Next() {
			var i int
			var status string
			if err := rows.Scan(&i, &status); err != nil {
				return err
			}
			email := fmt.Sprintf("r%d@example.org", i)
			if email == env.To[0] && status != rowReserved {
				unreserved.Add(1)
			}
			if status == rowReserved && !reached[email] {
				n++
			}
		}
		ahead = max(ahead, n)
		time.Sleep(3 * time.Millisecond)
		return rows.Err()
	}), postroom.Options{Auth: postroom.NoAuth{}, Concurrency: concurrency})
	if err != nil {
		t.Fatal(err)
	}
	call := postroom.Call{Key: "k", AccountID: "a", Message: postroom.Message{FromEmail: "shop@example.com", Subject: "Hi", Text: "Hello"}}
	idx := make([]int32, n)
	for i := range n {
		idx[i] = int32(i)
		call.Recipients = append(call.Recipients, postroom.Recipient{Email: fmt.Sprintf("r%d@example.org", i)})
	}
	var fast atomic.Bool
	h := newHandover(l, idx, &fast, make(chan struct{}, conns))
	results, err := m.Run(ctx, postroom.OpSend, &call, h.hooks(ctx))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.finish(ctx, results, nil); err != nil {
		t.Fatal(err)
	}
	if u := unreserved.Load(); u != 0 {
		t.Errorf("%d messages reached the transport unreserved", u)
	}
	// At most a write per message (each reserving the messages that took
	// the connections freed during the last), and the batch's last results.
	if r := cp.reserves.Load(); r > n+1 {
		t.Errorf("%d writes for %d recipients", r, n)
	}
	if k := most.Load(); k > conns {
		t.Errorf("%d messages at the transport at once, more than the %d connections", k, conns)
	}
	// The other connection's message, reserved and on its way.
	if ahead > conns-1 {
		t.Errorf("%d recipients reserved and not at the transport at once, more than the %d other connections' messages", ahead, conns-1)
	}
	var sent int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM postroom_outbox_recipients WHERE status = 'sent'`).Scan(&sent); err != nil {
		t.Fatal(err)
	}
	if sent != n {
		t.Errorf("%d recipients recorded sent, want %d", sent, n)
	}
	t.Logf("%d writes for %d recipients; at most %d reserved ahead of the transport", cp.reserves.Load(), n, ahead)
}

// TestTransient: a write is retried for what a restart or a lost
// connection does, not for an error in the statement itself.
func TestTransient(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{&pgconn.PgError{Code: "57P01"}, true}, // admin shutdown
		{&pgconn.PgError{Code: "57P03"}, true}, // cannot connect now
		{&pgconn.PgError{Code: "08006"}, true}, // connection failure
		{&pgconn.PgError{Code: "53300"}, true}, // too many connections
		{&pgconn.PgError{Code: "40001"}, true}, // serialization failure
		{&pgconn.PgError{Code: "23505"}, false},
		{&pgconn.PgError{Code: "42P01"}, false},
		{fmt.Errorf("outbox: record: %w", &pgconn.PgError{Code: "57P01"}), true},
		{fmt.Errorf("failed to connect: %w", io.ErrUnexpectedEOF), true},
		{context.DeadlineExceeded, false},
		{fmt.Errorf("outbox: record: %w", context.Canceled), false},
	} {
		if got := transient(tc.err); got != tc.want {
			t.Errorf("transient(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

// TestRetry: a write that fails for want of the database is tried again
// until it succeeds or its context ends; any other failure ends it at
// once.
func TestRetry(t *testing.T) {
	down := &pgconn.PgError{Code: "57P03"}
	bad := &pgconn.PgError{Code: "42P01"}
	script := func(errs ...error) (func(context.Context) error, *int) {
		calls := new(int)
		return func(context.Context) error {
			*calls++
			if *calls <= len(errs) {
				return errs[*calls-1]
			}
			return nil
		}, calls
	}
	w, calls := script(down, down, down)
	if err := retry(t.Context(), w); err != nil || *calls != 4 {
		t.Errorf("three transient failures: %v after %d calls, want nil after 4", err, *calls)
	}
	w, calls = script(bad)
	if err := retry(t.Context(), w); !errors.Is(err, bad) || *calls != 1 {
		t.Errorf("a bad statement: %v after %d calls, want it after 1", err, *calls)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*retryFirst)
	defer cancel()
	if err := retry(ctx, func(context.Context) error { return down }); !errors.Is(err, down) {
		t.Errorf("down until the deadline: %v, want the last error", err)
	}
}

// TestRelease: a reservation that a run undoes (its write failed, and
// may have been made all the same) leaves a recipient new to the run as
// it was before (not tried), and a deferred one deferred with its last
// reason; a reservation tried again after a lost answer is made once;
// the next run sends them all, and calls none of them interrupted.
func TestRelease(t *testing.T) {
	storeEngines(t, testRelease)
}

func testRelease(t *testing.T, db sqldb.DB) {
	ctx := t.Context()
	pool := storeDB(t, db, 3)
	var deferred entries
	deferred.add(1, rowDeferred, rowDeferred, "deferred: 451 try later", "")
	insertWrite(t, pool, "c", 0, -1, deferred)
	args := SendArgs{CallID: "c", First: 0, Count: 3}
	a, err := takeLease(ctx, pool, args)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.pending(ctx); err != nil {
		t.Fatal(err)
	}
	w := reserving(0, 1, 2)
	for range 2 { // the second time, as after an answer lost
		if got := putT(t, a, w); got != putDone {
			t.Fatalf("reserve: %v, want done", got)
		}
	}
	var writes int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM postroom_outbox_results WHERE wseq = $1`, w.seq).Scan(&writes); err != nil {
		t.Fatal(err)
	}
	if writes != 1 {
		t.Errorf("a write tried again made %d rows, want 1", writes)
	}
	rw := a.newWrite()
	a.release(rw, 0)
	a.release(rw, 1)
	if got := putT(t, a, rw); got != putDone {
		t.Fatalf("release: %v, want done", got)
	}
	rows := map[int32]string{}
	r, err := pool.Query(ctx, `SELECT idx, status || ' ' || reason FROM postroom_outbox_recipients WHERE call_id = 'c'`)
	if err != nil {
		t.Fatal(err)
	}
	for r.Next() {
		var i int32
		var s string
		if err := r.Scan(&i, &s); err != nil {
			t.Fatal(err)
		}
		rows[i] = s
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	r.Close()
	want := map[int32]string{1: "deferred deferred: 451 try later", 2: "reserved "}
	if len(rows) != len(want) || rows[1] != want[1] || rows[2] != want[2] {
		t.Errorf("states after release: %q, want %q", rows, want)
	}
	b, err := takeLease(ctx, pool, args)
	if err != nil {
		t.Fatal(err)
	}
	todo, err := b.pending(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(todo) != 2 || todo[0] != 0 || todo[1] != 1 || b.last(1) != "deferred: 451 try later" {
		t.Errorf("next run: to send %v (last reason of 1 %q), want 0 and 1 (1 deferred)", todo, b.last(1))
	}
}

// migratedPostgres returns a migrated PostgreSQL database holding call
// "c" of n recipients (see storeDB).
func migratedPostgres(t *testing.T, n int) sqldb.DB {
	t.Helper()
	db := dbtest.Postgres(t)
	if err := Migrate(t.Context(), db); err != nil {
		t.Fatal(err)
	}
	return storeDB(t, db, n)
}
