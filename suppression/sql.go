package suppression

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/postroom/postroom"
)

// SQL is a List in PostgreSQL, shared by every instance of an
// application: the tables Migrate creates, over the application's
// *pgxpool.Pool. It is safe for concurrent use, from any number of
// processes: each call is one statement, or one transaction that locks
// the address's row (Observe's soft bounces), so concurrent observations
// of one address count each bounce once. Build it with NewSQL.
//
// Suppressed is one query for all the addresses of a call and all their
// scopes (address = ANY($2), on the primary key), not one per address.
type SQL struct {
	pool *pgxpool.Pool
	opts Options
}

var _ List = (*SQL)(nil)

// NewSQL returns the list in pool's database, whose tables Migrate made.
// It refuses a nil pool or a negative Policy field; it does not connect.
func NewSQL(pool *pgxpool.Pool, opts Options) (*SQL, error) {
	if pool == nil {
		return nil, errors.New("suppression: NewSQL: nil pool")
	}
	if err := opts.check(); err != nil {
		return nil, err
	}
	return &SQL{pool: pool, opts: opts}, nil
}

// columns are an entry's columns, in the order scanEntry reads them.
const columns = `account_id, address, reason, detail, send_id, created_at, expires_at, scope, list_id`

// scanEntry reads one row of columns.
func scanEntry(row pgx.Row) (Entry, error) {
	var e Entry
	var reason, scope string
	var expires *time.Time
	if err := row.Scan(&e.AccountID, &e.Address, &reason, &e.Detail, &e.SendID, &e.Created, &expires, &scope, &e.List); err != nil {
		return Entry{}, err
	}
	e.Reason, e.Scope = postroom.ReasonCode(reason), postroom.Scope(scope)
	e.Created = e.Created.UTC()
	if expires != nil {
		e.Expires = expires.UTC()
	}
	return e, nil
}

// expiresArg is e's expiry as a query argument: NULL for never.
func expiresArg(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t
}

// Suppressed returns the entries of accountID active at now among
// addresses, of every scope (postroom.Suppressions), in one query.
func (s *SQL) Suppressed(ctx context.Context, accountID string, addresses []string, now time.Time) ([]postroom.Suppression, error) {
	if len(addresses) == 0 {
		return nil, ctx.Err()
	}
	// One query: PostgreSQL hashes the array (or probes the primary key
	// with it, for a large table).
	rows, err := s.pool.Query(ctx, `SELECT address, reason, detail, send_id, created_at, expires_at, scope, list_id
		FROM postroom_suppressions
		WHERE account_id = $1 AND address = ANY($2::text[])
		AND created_at <= $3 AND (expires_at IS NULL OR expires_at > $3)`,
		accountID, lowerAll(addresses), now)
	if err != nil {
		return nil, dbError(ctx, err)
	}
	var out []postroom.Suppression
	var s1 postroom.Suppression
	var reason, scope string
	var expires *time.Time
	_, err = pgx.ForEachRow(rows, []any{&s1.Address, &reason, &s1.Detail, &s1.SendID, &s1.Created, &expires, &scope, &s1.List}, func() error {
		s1.Reason, s1.Scope, s1.Created, s1.Expires = postroom.ReasonCode(reason), postroom.Scope(scope), s1.Created.UTC(), time.Time{}
		if expires != nil {
			s1.Expires = expires.UTC()
		}
		out = append(out, s1)
		return nil
	})
	if err != nil {
		return nil, dbError(ctx, err)
	}
	return out, nil
}

// Add lists e (see List.Add).
func (s *SQL) Add(ctx context.Context, e Entry) (Entry, error) {
	e, err := checkEntry(e, s.opts.Now())
	if err != nil {
		return Entry{}, err
	}
	_, err = s.pool.Exec(ctx, `INSERT INTO postroom_suppressions (`+columns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
		ON CONFLICT (account_id, address, scope, list_id) DO UPDATE SET reason = excluded.reason, detail = excluded.detail,
			send_id = excluded.send_id, created_at = excluded.created_at, expires_at = excluded.expires_at`,
		e.AccountID, e.Address, string(e.Reason), e.Detail, e.SendID, e.Created, expiresArg(e.Expires), string(e.Scope), e.List)
	if err != nil {
		return Entry{}, dbError(ctx, err)
	}
	return e, nil
}

// Delete removes an address's entries and its soft bounces, or its entry
// of one scope (see List.Delete), in one statement.
func (s *SQL) Delete(ctx context.Context, accountID, address string, scope postroom.Scope, list string) (bool, error) {
	if err := checkAccount(accountID); err != nil {
		return false, err
	}
	addr, err := normalAddress(address)
	if err != nil {
		return false, err
	}
	scope, list, _, err = deleteKey(scope, list)
	if err != nil {
		return false, err
	}
	// scope '' (every entry) and 'all' drop the soft bounces too.
	tag, err := s.pool.Exec(ctx, `WITH soft AS (
			DELETE FROM postroom_suppression_soft_bounces WHERE account_id = $1 AND address = $2 AND $3 IN ('', 'all')
		)
		DELETE FROM postroom_suppressions WHERE account_id = $1 AND address = $2
		AND ($3 = '' OR (scope = $3 AND list_id = $4))`, accountID, addr, string(scope), list)
	if err != nil {
		return false, dbError(ctx, err)
	}
	return tag.RowsAffected() > 0, nil
}

// List returns a page of entries (see List.List), in one query on the
// primary key's order (address, scope, list).
func (s *SQL) List(ctx context.Context, q Query) ([]Entry, string, error) {
	q, after, err := checkQuery(q)
	if err != nil {
		return nil, "", err
	}
	// Addresses are printable ASCII (the table's check), so those that
	// start with the prefix sort from it to it followed by DEL.
	rows, err := s.pool.Query(ctx, `SELECT `+columns+` FROM postroom_suppressions
		WHERE account_id = $1 AND (address, scope, list_id) > ($2, $8, $9)
		AND ($3 = '' OR (address >= $3 AND address < $3 || chr(127)))
		AND ($4 = '' OR reason = $4)
		AND ($5 OR (created_at <= $6 AND (expires_at IS NULL OR expires_at > $6)))
		AND ($10 = '' OR scope = $10) AND ($11 = '' OR list_id = $11)
		ORDER BY address, scope, list_id LIMIT $7`,
		q.AccountID, after.address, q.Prefix, string(q.Reason), q.IncludeExpired, s.opts.Now(), q.Limit+1,
		after.scope, after.list, string(q.Scope), q.List)
	if err != nil {
		return nil, "", dbError(ctx, err)
	}
	page, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Entry, error) { return scanEntry(row) })
	if err != nil {
		return nil, "", dbError(ctx, err)
	}
	if len(page) <= q.Limit {
		return page, "", nil
	}
	page = page[:q.Limit]
	return page, cursorAfter(&page[len(page)-1]), nil
}

// Observe applies the Policy to o (see List.Observe): one statement for a
// hard bounce, a complaint or an unsubscribe; for a soft bounce, a
// transaction that counts it on the address's locked row of soft bounces
// and lists the address at the count.
func (s *SQL) Observe(ctx context.Context, o Observation) (*Entry, error) {
	o, err := checkObservation(o, s.opts.Now())
	if err != nil {
		return nil, err
	}
	p := &s.opts.Policy
	e := p.entry(&o)
	if o.Kind != SoftBounce {
		return s.list(ctx, s.pool, &e, o.At)
	}
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return nil, dbError(ctx, err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) // after Commit, a no-op
	var n int
	// The bounces within the window, this one included: at most the
	// count, the latest kept.
	if err := tx.QueryRow(ctx, `INSERT INTO postroom_suppression_soft_bounces AS s (account_id, address, bounces)
		VALUES ($1, $2, ARRAY[$3::timestamptz])
		ON CONFLICT (account_id, address) DO UPDATE SET bounces = ARRAY(
			SELECT b FROM unnest(s.bounces || $3::timestamptz) AS b
			WHERE b > $4 ORDER BY b DESC LIMIT $5)
		RETURNING cardinality(bounces)`,
		o.AccountID, o.Address, o.At, o.At.Add(-p.SoftWindow), p.SoftBounces).Scan(&n); err != nil {
		return nil, dbError(ctx, err)
	}
	var listed *Entry
	if n >= p.SoftBounces {
		if _, err := tx.Exec(ctx, `DELETE FROM postroom_suppression_soft_bounces WHERE account_id = $1 AND address = $2`,
			o.AccountID, o.Address); err != nil {
			return nil, dbError(ctx, err)
		}
		if listed, err = s.list(ctx, tx, &e, o.At); err != nil {
			return nil, err
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, dbError(ctx, err)
	}
	return listed, nil
}

// Prune deletes the entries that expired at or before before, and the
// soft bounces that can no longer count towards a listing at before
// (older than Policy.SoftWindow), in one statement, and returns how many
// entries it deleted. Entries that never expire stay. Call it now and
// then (daily, from one instance or all) to keep the tables from growing
// with what no longer matters.
func (s *SQL) Prune(ctx context.Context, before time.Time) (int, error) {
	tag, err := s.pool.Exec(ctx, `WITH soft AS (
			DELETE FROM postroom_suppression_soft_bounces
			WHERE NOT EXISTS (SELECT FROM unnest(bounces) AS b WHERE b > $2)
		)
		DELETE FROM postroom_suppressions WHERE expires_at <= $1`, before, before.Add(-s.opts.Policy.SoftWindow))
	if err != nil {
		return 0, dbError(ctx, err)
	}
	return int(tag.RowsAffected()), nil
}

// execer is a pool or a transaction.
type execer interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// list writes an observation's entry e unless the address's entry of the
// same scope and list stays (see replaces), and returns e when written.
func (s *SQL) list(ctx context.Context, db execer, e *Entry, at time.Time) (*Entry, error) {
	var written bool
	err := db.QueryRow(ctx, `INSERT INTO postroom_suppressions AS e (`+columns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $9, $10)
		ON CONFLICT (account_id, address, scope, list_id) DO UPDATE SET reason = excluded.reason, detail = excluded.detail,
			send_id = excluded.send_id, created_at = excluded.created_at, expires_at = excluded.expires_at
		WHERE e.expires_at IS NOT NULL AND (e.expires_at <= $8 OR excluded.expires_at IS NULL)
		RETURNING true`,
		e.AccountID, e.Address, string(e.Reason), e.Detail, e.SendID, e.Created, expiresArg(e.Expires), at, string(e.Scope), e.List).Scan(&written)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil, nil // the entry there stays
	case err != nil:
		return nil, dbError(ctx, err)
	}
	return e, nil
}

// dbError returns ctx's error if ctx has ended, whatever the driver made
// of the cancellation, or err wrapped.
func dbError(ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	return fmt.Errorf("suppression: %w", err)
}
