package templatestore

import (
	"context"
	"errors"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/sqldb"
)

// The Manager methods of SQL: each change is one transaction that locks
// the template's row first.

// Add is Manager.Add.
func (s *SQL) Add(ctx context.Context, accountID, id, source string, publish bool) (*Template, error) {
	if err := checkChange(ctx, accountID, id, source); err != nil {
		return nil, err
	}
	var t *Template
	err := s.inTx(ctx, func(tx sqldb.Tx) error {
		n, err := tx.Exec(ctx,
			`INSERT INTO postroom_templates (account_id, id, draft) VALUES ($1, $2, $3)
			ON CONFLICT (account_id, id) DO NOTHING`,
			accountID, id, source)
		if err != nil {
			return err
		}
		if n == 0 {
			return exists(accountID, id)
		}
		if publish {
			if err := s.publish(ctx, tx, accountID, id, source, 0); err != nil {
				return err
			}
		}
		t, err = load(ctx, tx, accountID, id, false)
		return err
	})
	return t, err
}

// Update is Manager.Update.
func (s *SQL) Update(ctx context.Context, accountID, id, source string, publish bool) (*Template, error) {
	if err := checkChange(ctx, accountID, id, source); err != nil {
		return nil, err
	}
	return s.change(ctx, accountID, id, func(tx sqldb.Tx, draft string) error {
		if _, err := tx.Exec(ctx,
			`UPDATE postroom_templates SET draft = $3, updated_at = `+now(tx)+` WHERE account_id = $1 AND id = $2`,
			accountID, id, source); err != nil {
			return err
		}
		if publish {
			return s.publish(ctx, tx, accountID, id, source, 0)
		}
		return nil
	})
}

// Publish is Manager.Publish.
func (s *SQL) Publish(ctx context.Context, accountID, id string) (*Template, error) {
	if err := checkLookup(ctx, accountID, id); err != nil {
		return nil, err
	}
	return s.change(ctx, accountID, id, func(tx sqldb.Tx, draft string) error {
		return s.publish(ctx, tx, accountID, id, draft, 0)
	})
}

// PublishVersion is Manager.PublishVersion.
func (s *SQL) PublishVersion(ctx context.Context, accountID, id string, version int) (*Template, error) {
	if err := checkLookup(ctx, accountID, id); err != nil {
		return nil, err
	}
	return s.change(ctx, accountID, id, func(tx sqldb.Tx, _ string) error {
		var source string
		err := tx.QueryRow(ctx,
			`SELECT source FROM postroom_template_versions WHERE account_id = $1 AND id = $2 AND version = $3`,
			accountID, id, version).Scan(&source)
		if errors.Is(err, sqldb.ErrNoRows) {
			return versionNotFound(accountID, id, version)
		}
		if err != nil {
			return err
		}
		return s.publish(ctx, tx, accountID, id, source, version)
	})
}

// Remove is Manager.Remove.
func (s *SQL) Remove(ctx context.Context, accountID, id string) (*Template, error) {
	if err := checkLookup(ctx, accountID, id); err != nil {
		return nil, err
	}
	var t *Template
	err := s.inTx(ctx, func(tx sqldb.Tx) error {
		if _, err := lock(ctx, tx, accountID, id); err != nil {
			return err
		}
		var err error
		if t, err = load(ctx, tx, accountID, id, true); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `DELETE FROM postroom_templates WHERE account_id = $1 AND id = $2`, accountID, id)
		return err
	})
	return t, err
}

// Info is Manager.Info.
func (s *SQL) Info(ctx context.Context, accountID, id string) (*Template, error) {
	if err := checkLookup(ctx, accountID, id); err != nil {
		return nil, err
	}
	var t *Template
	err := s.inTx(ctx, func(tx sqldb.Tx) error {
		// One snapshot for the template's row and its versions (SQLite's
		// transaction is one already, holding the write lock).
		if tx.Engine() == sqldb.Postgres {
			if _, err := tx.Exec(ctx, `SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY`); err != nil {
				return err
			}
		}
		var err error
		t, err = load(ctx, tx, accountID, id, true)
		return err
	})
	return t, err
}

// List is Manager.List.
func (s *SQL) List(ctx context.Context, accountID string) ([]Template, error) {
	if err := checkList(ctx, accountID); err != nil {
		return nil, err
	}
	list := `SELECT t.id, t.draft, t.created_at, t.updated_at, v.version, v.source, v.published_at, v.from_version
		FROM postroom_templates t
		LEFT JOIN LATERAL (
			SELECT version, source, published_at, from_version FROM postroom_template_versions
			WHERE account_id = t.account_id AND id = t.id ORDER BY version DESC LIMIT 1
		) v ON true
		WHERE t.account_id = $1
		ORDER BY t.id COLLATE "C"`
	if s.DB.Engine() == sqldb.SQLite { // no LATERAL; text compares bytewise
		list = `SELECT t.id, t.draft, t.created_at, t.updated_at, v.version, v.source, v.published_at, v.from_version
		FROM postroom_templates t
		LEFT JOIN postroom_template_versions v ON v.account_id = t.account_id AND v.id = t.id
			AND v.version = (SELECT max(version) FROM postroom_template_versions WHERE account_id = t.account_id AND id = t.id)
		WHERE t.account_id = $1
		ORDER BY t.id`
	}
	rows, err := s.DB.Query(ctx, list, accountID)
	if err != nil {
		return nil, dbError(ctx, err)
	}
	defer rows.Close()
	var out []Template
	for rows.Next() {
		t := Template{AccountID: accountID}
		var (
			number, from *int
			source       *string
			published    *time.Time
		)
		if err := rows.Scan(&t.ID, &t.Draft, &t.Created, &t.Updated, &number, &source, &published, &from); err != nil {
			return nil, dbError(ctx, err)
		}
		if number != nil {
			t.Published = &Version{Version: *number, Source: *source, Published: *published}
			if from != nil {
				t.Published.From = *from
			}
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, dbError(ctx, err)
	}
	return out, nil
}

// inTx runs f in a transaction, committed when f returns nil. An error of
// f that is the store's own (a missing template, ErrExists) is returned
// as is, a database error wrapped (dbError).
func (s *SQL) inTx(ctx context.Context, f func(tx sqldb.Tx) error) error {
	err := sqldb.BeginFunc(ctx, s.DB, f)
	switch {
	case err == nil:
		return nil
	case isStoreError(err):
		return err
	}
	return dbError(ctx, err)
}

// now is the SQL of the current time in q's engine, for the column of
// the time a row changed.
func now(q sqldb.Querier) string {
	if q.Engine() == sqldb.SQLite {
		return `CAST(unixepoch('subsec') * 1000000 AS integer)`
	}
	return `now()`
}

// isStoreError reports whether err is one of the store's own errors,
// which a transaction returns as is.
func isStoreError(err error) bool {
	for _, target := range []error{ErrExists, ErrVersionNotFound, ErrInvalidSource, postroom.ErrTemplateNotFound} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

// change locks a stored template's row, runs f with its draft and returns
// the template after it, all in one transaction.
func (s *SQL) change(ctx context.Context, accountID, id string, f func(tx sqldb.Tx, draft string) error) (*Template, error) {
	var t *Template
	err := s.inTx(ctx, func(tx sqldb.Tx) error {
		draft, err := lock(ctx, tx, accountID, id)
		if err != nil {
			return err
		}
		if err := f(tx, draft); err != nil {
			return err
		}
		t, err = load(ctx, tx, accountID, id, false)
		return err
	})
	return t, err
}

// lock locks the row of a stored template for the rest of tx and returns
// its draft. On SQLite the transaction holds the database's write lock
// from its start: the row needs no lock of its own.
func lock(ctx context.Context, tx sqldb.Tx, accountID, id string) (string, error) {
	q := `SELECT draft FROM postroom_templates WHERE account_id = $1 AND id = $2 FOR UPDATE`
	if tx.Engine() == sqldb.SQLite {
		q = `SELECT draft FROM postroom_templates WHERE account_id = $1 AND id = $2`
	}
	var draft string
	err := tx.QueryRow(ctx, q, accountID, id).Scan(&draft)
	if errors.Is(err, sqldb.ErrNoRows) {
		return "", notFound(accountID, id)
	}
	return draft, err
}

// publish makes source live as a new version of a locked template,
// published again from version from (0: the draft), unless it is live
// already, and forgets the versions past KeepVersions.
func (s *SQL) publish(ctx context.Context, tx sqldb.Tx, accountID, id, source string, from int) error {
	var (
		newest int
		live   string
	)
	err := tx.QueryRow(ctx,
		`SELECT version, source FROM postroom_template_versions WHERE account_id = $1 AND id = $2
		ORDER BY version DESC LIMIT 1`,
		accountID, id).Scan(&newest, &live)
	switch {
	case errors.Is(err, sqldb.ErrNoRows):
	case err != nil:
		return err
	case live == source:
		return nil
	}
	var fromVersion *int
	if from > 0 {
		fromVersion = &from
	}
	if _, err := tx.Exec(ctx,
		`INSERT INTO postroom_template_versions (account_id, id, version, source, from_version) VALUES ($1, $2, $3, $4, $5)`,
		accountID, id, newest+1, source, fromVersion); err != nil {
		return err
	}
	_, err = tx.Exec(ctx,
		`DELETE FROM postroom_template_versions WHERE account_id = $1 AND id = $2 AND version <= $3`,
		accountID, id, newest+1-keepVersions(s.KeepVersions))
	return err
}

// load reads a stored template in tx, with all its kept versions when all
// is set, else with its live one only.
func load(ctx context.Context, tx sqldb.Tx, accountID, id string, all bool) (*Template, error) {
	t := &Template{AccountID: accountID, ID: id}
	err := tx.QueryRow(ctx,
		`SELECT draft, created_at, updated_at FROM postroom_templates WHERE account_id = $1 AND id = $2`,
		accountID, id).Scan(&t.Draft, &t.Created, &t.Updated)
	if errors.Is(err, sqldb.ErrNoRows) {
		return nil, notFound(accountID, id)
	}
	if err != nil {
		return nil, err
	}
	limit := 1
	if all {
		limit = keepAll
	}
	rows, err := tx.Query(ctx,
		`SELECT version, source, published_at, COALESCE(from_version, 0) FROM postroom_template_versions
		WHERE account_id = $1 AND id = $2 ORDER BY version DESC LIMIT $3`,
		accountID, id, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var versions []Version
	for rows.Next() {
		var v Version
		if err := rows.Scan(&v.Version, &v.Source, &v.Published, &v.From); err != nil {
			return nil, err
		}
		versions = append(versions, v)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(versions) > 0 {
		live := versions[0]
		t.Published = &live
	}
	if all {
		t.Versions = versions
	}
	return t, nil
}

// keepAll is the LIMIT that reads every kept version: more than any
// KeepVersions a store is given.
const keepAll = 1 << 30
