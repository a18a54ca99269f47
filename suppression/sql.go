package suppression

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/sqldb"
)

// SQL is a List in a database, over the application's sqldb.DB: the
// tables Migrate creates. On PostgreSQL (package sqldb/pgxdb) it is
// shared by every instance of an application; on SQLite (sqldb/sqlitedb)
// it serves the one process that holds the file. It is safe for
// concurrent use: each call is one statement, or one transaction that
// locks the address's row of soft bounces (Observe; SQLite's transaction
// holds the database's write lock), so concurrent observations of one
// address count each bounce once. Build it with NewSQL.
//
// Suppressed is one query for all the addresses of a call and all their
// scopes (on the primary key), not one per address.
type SQL struct {
	db   sqldb.DB
	opts Options
	q    *queries
}

var _ List = (*SQL)(nil)

// NewSQL returns the list in db's database, whose tables Migrate made.
// It refuses a nil db or a negative Policy field; it does not connect.
func NewSQL(db sqldb.DB, opts Options) (*SQL, error) {
	if db == nil {
		return nil, errors.New("suppression: NewSQL: nil db")
	}
	if err := opts.check("suppression.NewSQL"); err != nil {
		return nil, err
	}
	q := &postgresQueries
	if db.Engine() == sqldb.SQLite {
		q = &sqliteQueries
	}
	return &SQL{db: db, opts: opts, q: q}, nil
}

// columns are an entry's columns, in the order scanEntry reads them.
const columns = `account_id, address, reason, detail, send_id, created_at, expires_at, scope, list_id`

// scanEntry reads one row of columns.
func scanEntry(row sqldb.Row) (Entry, error) {
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
	// with it, for a large table); SQLite probes the primary key with
	// each address of the JSON array.
	rows, err := s.db.Query(ctx, s.q.suppressed, accountID, lowerAll(addresses), now)
	if err != nil {
		return nil, dbError(ctx, err)
	}
	defer rows.Close()
	var out []postroom.Suppression
	var s1 postroom.Suppression
	var reason, scope string
	var expires *time.Time
	for rows.Next() {
		if err := rows.Scan(&s1.Address, &reason, &s1.Detail, &s1.SendID, &s1.Created, &expires, &scope, &s1.List); err != nil {
			return nil, dbError(ctx, err)
		}
		s1.Reason, s1.Scope, s1.Created, s1.Expires = postroom.ReasonCode(reason), postroom.Scope(scope), s1.Created.UTC(), time.Time{}
		if expires != nil {
			s1.Expires = expires.UTC()
		}
		out = append(out, s1)
	}
	if err := rows.Err(); err != nil {
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
	_, err = s.db.Exec(ctx, `INSERT INTO postroom_suppressions (`+columns+`)
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
// of one scope (see List.Delete): one statement on PostgreSQL, one
// transaction on SQLite.
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
	var n int64
	err = s.each(ctx, s.q.delete, func(q sqldb.Querier, stmt string) error {
		var err error
		n, err = q.Exec(ctx, stmt, accountID, addr, string(scope), list)
		return err
	})
	if err != nil {
		return false, dbError(ctx, err)
	}
	return n > 0, nil
}

// each runs stmts with run: the one statement on the DB, or several in a
// transaction (the last one's result is the call's).
func (s *SQL) each(ctx context.Context, stmts []string, run func(q sqldb.Querier, stmt string) error) error {
	if len(stmts) == 1 {
		return run(s.db, stmts[0])
	}
	return sqldb.BeginFunc(ctx, s.db, func(tx sqldb.Tx) error {
		for _, stmt := range stmts {
			if err := run(tx, stmt); err != nil {
				return err
			}
		}
		return nil
	})
}

// List returns a page of entries (see List.List), in one query on the
// primary key's order (address, scope, list).
func (s *SQL) List(ctx context.Context, q Query) ([]Entry, string, error) {
	q, after, err := checkQuery(q)
	if err != nil {
		return nil, "", err
	}
	rows, err := s.db.Query(ctx, s.q.list,
		q.AccountID, after.address, q.Prefix, string(q.Reason), q.IncludeExpired, s.opts.Now(), q.Limit+1,
		after.scope, after.list, string(q.Scope), q.List)
	if err != nil {
		return nil, "", dbError(ctx, err)
	}
	defer rows.Close()
	var page []Entry
	for rows.Next() {
		e, err := scanEntry(rows)
		if err != nil {
			return nil, "", dbError(ctx, err)
		}
		page = append(page, e)
	}
	if err := rows.Err(); err != nil {
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
		return s.list(ctx, s.db, &e, o.At)
	}
	tx, err := s.db.Begin(ctx)
	if err != nil {
		return nil, dbError(ctx, err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) // after Commit, a no-op
	var n int
	// The bounces within the window, this one included: at most the
	// count, the latest kept.
	if err := tx.QueryRow(ctx, s.q.softBounce,
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
// (older than Policy.SoftWindow), in one statement (one transaction on
// SQLite), and returns how many entries it deleted. Entries that never
// expire stay. Call it now and then (daily, from one instance or all) to
// keep the tables from growing with what no longer matters.
func (s *SQL) Prune(ctx context.Context, before time.Time) (int, error) {
	var n int64
	err := s.each(ctx, s.q.prune, func(q sqldb.Querier, stmt string) error {
		var err error
		n, err = q.Exec(ctx, stmt, before, before.Add(-s.opts.Policy.SoftWindow))
		return err
	})
	if err != nil {
		return 0, dbError(ctx, err)
	}
	return int(n), nil
}

// list writes an observation's entry e unless the address's entry of the
// same scope and list stays (see replaces), and returns e when written.
func (s *SQL) list(ctx context.Context, q sqldb.Querier, e *Entry, at time.Time) (*Entry, error) {
	var written bool
	err := q.QueryRow(ctx, `INSERT INTO postroom_suppressions AS e (`+columns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $9, $10)
		ON CONFLICT (account_id, address, scope, list_id) DO UPDATE SET reason = excluded.reason, detail = excluded.detail,
			send_id = excluded.send_id, created_at = excluded.created_at, expires_at = excluded.expires_at
		WHERE e.expires_at IS NOT NULL AND (e.expires_at <= $8 OR excluded.expires_at IS NULL)
		RETURNING true`,
		e.AccountID, e.Address, string(e.Reason), e.Detail, e.SendID, e.Created, expiresArg(e.Expires), at, string(e.Scope), e.List).Scan(&written)
	switch {
	case errors.Is(err, sqldb.ErrNoRows):
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
