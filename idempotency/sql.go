package idempotency

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/sqldb"
)

// SQL is a Store in a database behind package sqldb: PostgreSQL (package
// sqldb/pgxdb, over the application's pgx pool), for many instances
// sharing one database, or SQLite (package sqldb/sqlitedb), for one
// process. Apply the schema first (Migrate).
//
// # The key's lock
//
// On PostgreSQL a Claim holds a transaction open for the whole call, in
// which it took the key's transaction-level advisory lock; Release ends
// it. The server releases the lock when that transaction or its
// connection ends, as it does when the holder's process dies, so that a
// retry on another instance takes the key over at once. The lock key is
// the first 8 bytes of SHA-256 of the account and the key, as a bigint (a
// collision only makes two keys answer ErrInProgress for each other); it
// is the key earlier releases took as a session lock, so that instances
// of both exclude each other while they run side by side. The open
// transaction only holds the lock: it writes nothing, and keeps no
// snapshot between statements. A server's idle_in_transaction_session_timeout
// shorter than the longest call ends it early: the key is then free
// while its call still runs (the next Claim takes it over, see below).
//
// On SQLite, which serves one process, a lock in the SQL value stands in
// for the advisory lock: keep one SQL per database in the process (two
// SQL values over one file each take the key over from the other instead
// of answering ErrInProgress), and no transaction is held across the
// call.
//
// # The record's writes
//
// Each claim bumps the record's epoch, and each write names the epoch its
// claim took: a holder taken over (presumed dead, its lock gone) has its
// writes refused, and keeps its next messages back. On PostgreSQL a write
// locks the record while it checks the epoch, so that a write and a claim
// taking the key over never cross: the claim reads what the write wrote,
// or the write finds the epoch bumped.
//
// Each recipient costs two single-row writes (handed over, final), one
// statement and commit each, on any connection of the pool. A call in
// flight on PostgreSQL holds one connection for its whole length (its
// lock), and needs another for a moment to claim its record and for each
// write: keep the calls in flight well under the pool's MaxConns (at most
// half of it, say), leaving room for their writes and for what else uses
// the pool (the Mailer's template lookups, when its TemplateStore shares
// the pool, run while the call holds its connection). With every
// connection held by a call's lock, the calls wait for each other until
// their contexts end.
//
// Records past the retention window are ignored by Claim and deleted by
// DeleteExpired, which the application calls from time to time (say
// hourly, from one instance or all: it is safe to run concurrently).
//
// Use NewSQL; the zero value is not usable. A SQL is safe for concurrent
// use.
type SQL struct {
	db   sqldb.DB
	q    queries
	opts Options
	// locks holds the keys on SQLite.
	locks keyLocks
}

// NewSQL returns a Store in db's database with opts. It does not touch
// the database, and never closes db.
func NewSQL(db sqldb.DB, opts Options) (*SQL, error) {
	if db == nil {
		return nil, errors.New("idempotency: NewSQL: nil db")
	}
	q, ok := queriesOf(db.Engine())
	if !ok {
		return nil, fmt.Errorf("idempotency: NewSQL: unknown engine %q", db.Engine())
	}
	if err := opts.setDefaults("idempotency.NewSQL"); err != nil {
		return nil, err
	}
	return &SQL{db: db, q: q, opts: opts}, nil
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

// postgres reports whether s is on PostgreSQL (else SQLite).
func (s *SQL) postgres() bool { return s.db.Engine() == sqldb.Postgres }

// Claim takes k for one call with payload h; see Store.
func (s *SQL) Claim(ctx context.Context, k Key, h Hash) (Claim, error) {
	if err := k.Check(); err != nil {
		return nil, err
	}
	c := &sqlClaim{s: s}
	if s.postgres() {
		tx, err := s.db.Begin(ctx)
		if err != nil {
			return nil, fmt.Errorf("idempotency: claim: %w", err)
		}
		var locked bool
		if err := tx.QueryRow(ctx, "SELECT pg_try_advisory_xact_lock($1)", lockKey(k)).Scan(&locked); err != nil || !locked {
			_ = tx.Rollback(context.WithoutCancel(ctx))
			if err != nil {
				return nil, fmt.Errorf("idempotency: claim: %w", err)
			}
			return nil, ErrInProgress
		}
		c.tx = tx
	} else {
		if c.hold = s.locks.tryLock(k); c.hold == nil {
			return nil, ErrInProgress
		}
	}
	if err := sqldb.BeginFunc(ctx, s.db, func(tx sqldb.Tx) error { return s.claimRecord(ctx, tx, c, k, h) }); err != nil {
		if uerr := c.unlock(context.WithoutCancel(ctx)); uerr != nil {
			err = errors.Join(err, uerr)
		}
		if !errors.Is(err, ErrConflict) {
			err = fmt.Errorf("idempotency: claim: %w", err)
		}
		return nil, err
	}
	return c, nil
}

// claimRecord creates or takes over k's record in tx, with k held, and
// sets c's id, epoch and entries.
func (s *SQL) claimRecord(ctx context.Context, tx sqldb.Tx, c *sqlClaim, k Key, h Hash) error {
	now := s.opts.Now()
	var (
		hash     []byte
		started  time.Time
		inserted bool
	)
	if err := tx.QueryRow(ctx, s.q.claim, k.AccountID, k.Key, h[:], now).Scan(&c.id, &c.epoch, &hash, &started, &inserted); err != nil {
		return err
	}
	if inserted {
		return nil
	}
	var has bool
	if err := tx.QueryRow(ctx, hasEntriesSQL, c.id).Scan(&has); err != nil {
		return err
	}
	switch {
	case !has || !started.Add(s.opts.Retention).After(now):
		// Empty or expired: the key is free for this call.
		if _, err := tx.Exec(ctx, clearSQL, c.id); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, restartSQL, c.id, h[:], now); err != nil {
			return err
		}
		return nil
	case Hash(hash) != h:
		return ErrConflict
	}
	var err error
	c.entries, err = loadEntries(ctx, tx, c.id)
	return err
}

// loadEntries reads a call's entries in index order.
func loadEntries(ctx context.Context, tx sqldb.Tx, id int64) ([]Entry, error) {
	rows, err := tx.Query(ctx, entriesSQL, id)
	if err != nil {
		return nil, err
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
			return nil, err
		}
		if status != nil {
			e.Result.Status = postroom.Status(*status)
		}
		e.Result.Code = postroom.ReasonCode(code)
		entries = append(entries, e)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return entries, rows.Close()
}

// Wait blocks until no call holds k, or ctx is done. On PostgreSQL it
// takes k's advisory lock, waiting for it, and lets it go at once: a Claim
// of k in that instant answers ErrInProgress.
func (s *SQL) Wait(ctx context.Context, k Key) error {
	if !s.postgres() {
		if err := s.locks.wait(ctx, k); err != nil {
			return fmt.Errorf("idempotency: wait: %w", err)
		}
		return nil
	}
	tx, err := s.db.Begin(ctx)
	if err != nil {
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return fmt.Errorf("idempotency: wait: %w", err)
	}
	_, err = tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", lockKey(k))
	// Ending the transaction lets the lock go; had it failed, its
	// connection is closed, and the server lets the lock go with it.
	rerr := tx.Rollback(context.WithoutCancel(ctx))
	switch {
	case err != nil && ctx.Err() != nil:
		return fmt.Errorf("idempotency: wait: %w", ctx.Err())
	case err != nil:
		return fmt.Errorf("idempotency: wait: %w", err)
	case rerr != nil:
		return fmt.Errorf("idempotency: wait: %w", rerr)
	}
	return nil
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
		n, err := s.db.Exec(ctx, s.q.deleteExpired, before, deleteBatch)
		if err != nil {
			return total, fmt.Errorf("idempotency: delete expired: %w", err)
		}
		total += int(n)
		if n < deleteBatch {
			return total, nil
		}
	}
}

// sqlClaim is a Claim on a SQL record: the key's lock, and the epoch
// every write names.
type sqlClaim struct {
	s *SQL
	// mu guards tx and hold, which Release ends.
	mu sync.Mutex
	// tx holds the key's advisory lock on PostgreSQL; hold holds the key
	// on SQLite. Both are nil once Release ended them.
	tx      sqldb.Tx
	hold    *keyHold
	id      int64
	epoch   int64
	entries []Entry
}

func (c *sqlClaim) Entries() []Entry { return c.entries }

// write runs a write of one row when c still holds its record, and
// returns errClaimLost when it does not.
func (c *sqlClaim) write(ctx context.Context, query string, args ...any) error {
	n, err := c.s.db.Exec(ctx, query, append([]any{c.id, c.epoch}, args...)...)
	if err != nil {
		return fmt.Errorf("idempotency: recording: %w", err)
	}
	if n == 0 {
		return errClaimLost
	}
	return nil
}

func (c *sqlClaim) HandOver(ctx context.Context, i int, sendID string) error {
	return c.write(ctx, c.s.q.handOver, i, sendID)
}

func (c *sqlClaim) Finish(ctx context.Context, i int, r postroom.Result) error {
	return c.write(ctx, c.s.q.finish, i, r.SendID, string(r.Status), string(r.Code), r.Reason)
}

// Release deletes the record if it has no entries and lets the key go. On
// PostgreSQL the delete runs in the lock's transaction, which then
// commits: the key is free once the delete is.
func (c *sqlClaim) Release(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tx == nil && c.hold == nil {
		return nil
	}
	if c.tx != nil {
		tx := c.tx
		c.tx = nil
		if _, err := tx.Exec(ctx, releaseSQL, c.id, c.epoch); err != nil {
			// Rolling back lets the lock go, or closes the connection
			// and the server lets it go.
			_ = tx.Rollback(context.WithoutCancel(ctx))
			return fmt.Errorf("idempotency: release: %w", err)
		}
		if err := tx.Commit(ctx); err != nil {
			return fmt.Errorf("idempotency: release: %w", err)
		}
		return nil
	}
	defer c.unlockLocked(ctx)
	if _, err := c.s.db.Exec(ctx, releaseSQL, c.id, c.epoch); err != nil {
		return fmt.Errorf("idempotency: release: %w", err)
	}
	return nil
}

// unlock lets c's key go without touching its record.
func (c *sqlClaim) unlock(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.unlockLocked(ctx)
}

// unlockLocked is unlock with c.mu held.
func (c *sqlClaim) unlockLocked(ctx context.Context) error {
	if c.tx != nil {
		tx := c.tx
		c.tx = nil
		return tx.Rollback(ctx)
	}
	if c.hold != nil {
		c.s.locks.unlock(c.hold)
		c.hold = nil
	}
	return nil
}
