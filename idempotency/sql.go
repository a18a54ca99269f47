package idempotency

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/postroom/postroom"
)

// Schema is the SQL that creates the tables SQL uses, for PostgreSQL 12 or
// later: postroom_idempotency_calls and postroom_idempotency_recipients.
// Apply it with your migration tool, or call SQL.Migrate. Every statement
// is idempotent.
//
//go:embed schema.sql
var Schema string

// SQL is a Store in PostgreSQL, for many instances sharing one database.
// It works on the application's pgx pool (*pgxpool.Pool), the one every
// part of postroom that keeps state in PostgreSQL takes (see the package
// documentation, # Stores); apply Schema first.
//
// A Claim holds a PostgreSQL session-level advisory lock on a connection
// of its own for the whole call; the server releases it when that
// connection ends, as it does when the holder's process dies, so that a
// retry on another instance takes the key over at once. The lock key is
// the first 8 bytes of SHA-256 of the account and the key, as a bigint (a
// collision only makes two keys answer ErrInProgress for each other).
// Every write of the call runs on that same connection, so a write
// succeeds only while the session, and with it the lock, lives: a holder
// that lost its connection but still runs gets its writes refused, and
// keeps its next messages back. As a second guard, each claim bumps the
// record's epoch and each write names the epoch it claimed. Session locks
// need a real session: put no pooler in transaction mode (PgBouncer's
// pool_mode=transaction) between SQL and the server.
//
// Each recipient costs two single-row writes (handed over, final), one
// round trip and commit each, on the call's connection: the call's
// workers take turns on it. A call in flight holds one connection of the
// pool for its whole length; keep the calls in flight under the pool's
// MaxConns, leaving room for what else uses the pool (the Mailer's
// template lookups, when its TemplateStore shares the pool, run while the
// call holds its connection).
//
// Records past the retention window are ignored by Claim and deleted by
// DeleteExpired, which the application calls from time to time (say
// hourly, from one instance or all: it is safe to run concurrently).
//
// Use NewSQL; the zero value is not usable. A SQL is safe for concurrent
// use.
type SQL struct {
	pool *pgxpool.Pool
	opts Options
}

// NewSQL returns a Store in the database of pool with opts. It does not
// touch the database, and never closes pool.
func NewSQL(pool *pgxpool.Pool, opts Options) (*SQL, error) {
	if pool == nil {
		return nil, errors.New("idempotency: NewSQL: nil pool")
	}
	if err := opts.setDefaults(); err != nil {
		return nil, err
	}
	return &SQL{pool: pool, opts: opts}, nil
}

// migrateLock is the advisory lock Migrate takes, so that instances
// starting together apply Schema one after the other.
const migrateLock = 0x706f7374726f6f6d // "postroom"

// Migrate applies Schema in one transaction. It is safe to call at every
// start, from every instance at once.
func (s *SQL) Migrate(ctx context.Context) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("idempotency: migrate: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) // after Commit, a no-op
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", int64(migrateLock)); err != nil {
		return fmt.Errorf("idempotency: migrate: %w", err)
	}
	// No arguments: pgx sends it with the simple protocol, which runs
	// every statement of Schema.
	if _, err := tx.Exec(ctx, Schema); err != nil {
		return fmt.Errorf("idempotency: migrate: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("idempotency: migrate: %w", err)
	}
	return nil
}

// lockKey is k's advisory lock key.
func lockKey(k Key) int64 {
	h := sha256.New()
	var n [8]byte
	h.Write([]byte("postroom idempotency\x00"))
	binary.BigEndian.PutUint64(n[:], uint64(len(k.AccountID)))
	h.Write(n[:])
	h.Write([]byte(k.AccountID))
	h.Write([]byte(k.Key))
	return int64(binary.BigEndian.Uint64(h.Sum(nil)))
}

// discardTimeout bounds the goodbye of a discarded connection: past it,
// its socket is closed without one.
const discardTimeout = time.Second

// discard closes conn for good, for a connection whose session state is
// unknown (it may hold an advisory lock): the server ends its session,
// releasing its locks, and the pool, given back a closed connection,
// drops it.
func discard(conn *pgxpool.Conn) {
	closeConn(conn)
	conn.Release()
}

// closeConn closes conn's session, leaving conn to be released.
func closeConn(conn *pgxpool.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), discardTimeout)
	defer cancel()
	_ = conn.Conn().Close(ctx)
}

// unlock releases the advisory lock held on conn and returns conn to the
// pool, or discards conn when that fails.
func unlock(ctx context.Context, conn *pgxpool.Conn, lock int64) error {
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_unlock($1)", lock); err != nil {
		discard(conn)
		return err
	}
	conn.Release()
	return nil
}

// Claim takes k for one call with payload h; see Store.
func (s *SQL) Claim(ctx context.Context, k Key, h Hash) (Claim, error) {
	if err := k.Check(); err != nil {
		return nil, err
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("idempotency: claim: %w", err)
	}
	lock := lockKey(k)
	var locked bool
	if err := conn.QueryRow(ctx, "SELECT pg_try_advisory_lock($1)", lock).Scan(&locked); err != nil {
		discard(conn)
		return nil, fmt.Errorf("idempotency: claim: %w", err)
	}
	if !locked {
		conn.Release()
		return nil, ErrInProgress
	}
	c, err := s.claimRecord(ctx, conn, k, h)
	if err != nil {
		if uerr := unlock(context.WithoutCancel(ctx), conn, lock); uerr != nil {
			err = errors.Join(err, uerr)
		}
		return nil, err
	}
	c.conn, c.lock = conn, lock
	return c, nil
}

// claimRecord creates or takes over k's record, with the advisory lock
// held on conn, in one transaction.
func (s *SQL) claimRecord(ctx context.Context, conn *pgxpool.Conn, k Key, h Hash) (*sqlClaim, error) {
	now := s.opts.Now()
	tx, err := conn.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("idempotency: claim: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) // after Commit, a no-op
	c := &sqlClaim{}
	var (
		hash     []byte
		started  time.Time
		inserted bool
	)
	err = tx.QueryRow(ctx, `
INSERT INTO postroom_idempotency_calls (account_id, idempotency_key, request_hash, started_at)
VALUES ($1, $2, $3, $4)
ON CONFLICT (account_id, idempotency_key) DO UPDATE SET epoch = postroom_idempotency_calls.epoch + 1
RETURNING id, epoch, request_hash, started_at, xmax = 0`,
		k.AccountID, k.Key, h[:], now).Scan(&c.id, &c.epoch, &hash, &started, &inserted)
	if err != nil {
		return nil, fmt.Errorf("idempotency: claim: %w", err)
	}
	if !inserted {
		var has bool
		if err := tx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM postroom_idempotency_recipients WHERE call_id = $1)", c.id).Scan(&has); err != nil {
			return nil, fmt.Errorf("idempotency: claim: %w", err)
		}
		switch {
		case !has || !started.Add(s.opts.Retention).After(now):
			// Empty or expired: the key is free for this call.
			if _, err := tx.Exec(ctx, "DELETE FROM postroom_idempotency_recipients WHERE call_id = $1", c.id); err != nil {
				return nil, fmt.Errorf("idempotency: claim: %w", err)
			}
			if _, err := tx.Exec(ctx, "UPDATE postroom_idempotency_calls SET request_hash = $2, started_at = $3 WHERE id = $1", c.id, h[:], now); err != nil {
				return nil, fmt.Errorf("idempotency: claim: %w", err)
			}
		case Hash(hash) != h:
			return nil, ErrConflict
		default:
			if c.entries, err = loadEntries(ctx, tx, c.id); err != nil {
				return nil, err
			}
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("idempotency: claim: %w", err)
	}
	return c, nil
}

// loadEntries reads a call's entries in index order.
func loadEntries(ctx context.Context, tx pgx.Tx, id int64) ([]Entry, error) {
	rows, err := tx.Query(ctx, "SELECT idx, send_id, status, code, reason FROM postroom_idempotency_recipients WHERE call_id = $1 ORDER BY idx", id)
	if err != nil {
		return nil, fmt.Errorf("idempotency: claim: %w", err)
	}
	defer rows.Close()
	var entries []Entry
	for rows.Next() {
		var (
			e      Entry
			status *string // NULL while handed over
			code   string
		)
		if err := rows.Scan(&e.Index, &e.Result.SendID, &status, &code, &e.Result.Reason); err != nil {
			return nil, fmt.Errorf("idempotency: claim: %w", err)
		}
		if status != nil {
			e.Result.Status = postroom.Status(*status)
		}
		e.Result.Code = postroom.ReasonCode(code)
		entries = append(entries, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("idempotency: claim: %w", err)
	}
	return entries, nil
}

// Wait blocks until no call holds k, or ctx is done: it takes k's advisory
// lock, waiting for it, and lets it go at once. A Claim of k in that
// instant answers ErrInProgress.
func (s *SQL) Wait(ctx context.Context, k Key) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("idempotency: wait: %w", err)
	}
	lock := lockKey(k)
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", lock); err != nil {
		// Canceled, perhaps after the lock was taken: drop the session.
		discard(conn)
		return fmt.Errorf("idempotency: wait: %w", err)
	}
	return unlock(context.WithoutCancel(ctx), conn, lock)
}

// deleteBatch is how many records one statement of DeleteExpired deletes,
// to keep its transactions short.
const deleteBatch = 1000

// DeleteExpired deletes the records of the calls started before before, a
// thousand at a time. A call still running that old loses its record: its
// next messages are kept back (keep the retention window far above the
// longest call).
func (s *SQL) DeleteExpired(ctx context.Context, before time.Time) (int, error) {
	total := 0
	for {
		tag, err := s.pool.Exec(ctx, `
DELETE FROM postroom_idempotency_calls WHERE id IN (
    SELECT id FROM postroom_idempotency_calls WHERE started_at < $1 LIMIT $2
    FOR UPDATE SKIP LOCKED)`, before, deleteBatch)
		if err != nil {
			return total, fmt.Errorf("idempotency: delete expired: %w", err)
		}
		n := tag.RowsAffected()
		total += int(n)
		if n < deleteBatch {
			return total, nil
		}
	}
}

// sqlClaim is a Claim on a SQL record: the advisory lock on conn, and the
// epoch every write names.
type sqlClaim struct {
	// mu makes the call's workers take turns on conn, which, as every
	// pgx connection, serves one statement at a time.
	mu      sync.Mutex
	conn    *pgxpool.Conn // holds the advisory lock; every write runs on it
	lock    int64
	id      int64
	epoch   int64
	entries []Entry
}

func (c *sqlClaim) Entries() []Entry { return c.entries }

// exec runs a write on the lock's connection: it inserts or updates one
// row when c still holds its record, and returns errClaimLost when it
// does not.
func (c *sqlClaim) exec(ctx context.Context, query string, args ...any) error {
	c.mu.Lock()
	tag, err := c.conn.Exec(ctx, query, append([]any{c.id, c.epoch}, args...)...)
	c.mu.Unlock()
	if err != nil {
		return fmt.Errorf("idempotency: recording: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return errClaimLost
	}
	return nil
}

// held selects the claim's record if its epoch is still the claim's.
const held = `WITH c AS (SELECT id FROM postroom_idempotency_calls WHERE id = $1 AND epoch = $2) `

func (c *sqlClaim) HandOver(ctx context.Context, i int, sendID string) error {
	return c.exec(ctx, held+`
INSERT INTO postroom_idempotency_recipients (call_id, idx, send_id) SELECT id, $3, $4 FROM c`, i, sendID)
}

func (c *sqlClaim) Finish(ctx context.Context, i int, r postroom.Result) error {
	return c.exec(ctx, held+`
INSERT INTO postroom_idempotency_recipients (call_id, idx, send_id, status, code, reason)
SELECT id, $3, $4, $5, $6, $7 FROM c
ON CONFLICT (call_id, idx) DO UPDATE
SET send_id = EXCLUDED.send_id, status = EXCLUDED.status, code = EXCLUDED.code, reason = EXCLUDED.reason
WHERE postroom_idempotency_recipients.status IS NULL`, i, r.SendID, string(r.Status), string(r.Code), r.Reason)
}

func (c *sqlClaim) Release(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, err := c.conn.Exec(ctx, `
DELETE FROM postroom_idempotency_calls WHERE id = $1 AND epoch = $2
AND NOT EXISTS (SELECT 1 FROM postroom_idempotency_recipients WHERE call_id = $1)`, c.id, c.epoch)
	if err != nil {
		discard(c.conn) // the server releases the lock with the session
		return fmt.Errorf("idempotency: release: %w", err)
	}
	if err := unlock(ctx, c.conn, c.lock); err != nil {
		return fmt.Errorf("idempotency: release: %w", err)
	}
	return nil
}
