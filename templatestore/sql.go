package templatestore

import (
	"context"
	"errors"
	"fmt"

	"github.com/postroom/postroom/sqldb"
)

// SQL is a Manager in a database, reached through an sqldb.DB: PostgreSQL
// (package sqldb/pgxdb, over the application's pgx pool), for
// applications that run several instances sharing their templates, or
// SQLite (sqldb/sqlitedb), for one process. It reads and writes the tables
// postroom_templates (each template's draft) and postroom_template_versions
// (its published versions), which Migrate creates; each lookup is one
// query, so a template changed by any method, by another instance or by
// hand is seen by the next call, and nothing is cached. Each change runs
// in one transaction that locks the template's row (SELECT ... FOR UPDATE
// on PostgreSQL; on SQLite the transaction holds the database's write
// lock), so instances changing one template at once change it one after
// another.
//
// The DB is the one the application already has (see the package
// documentation, # SQL): the store takes no connection of its own but for
// the length of each query or transaction. Every statement keeps the
// account id in its WHERE clause, so one account never reaches another's
// templates, and ids that break the rules in the package documentation
// are refused before any query.
//
// The zero value has no DB and must not be used; NewSQL returns an SQL
// ready to use. An SQL is safe for concurrent use, as an sqldb.DB is.
// Its fields must not be changed once it is in use; the SQL never closes
// the DB.
type SQL struct {
	// DB is the database holding the tables.
	DB sqldb.DB

	// KeepVersions is how many published versions of each template are
	// kept, the live one included: publishing forgets the older ones.
	// Zero (or negative) means DefaultKeepVersions. Instances sharing a
	// database should agree on it.
	KeepVersions int
}

// NewSQL returns an SQL reading and writing templates in the database of
// db. It does not touch the database; call Migrate once before the
// first lookup.
func NewSQL(db sqldb.DB) *SQL {
	return &SQL{DB: db}
}

// Template returns the live source of template id of account accountID:
// its newest published version.
//
// A template that is not stored or never published, or an invalid id,
// gives an error wrapping postroom.ErrTemplateNotFound; a ctx done before
// or during the query gives ctx.Err(). Other errors are the database's,
// wrapped (a missing table, when Migrate was not run, is one).
func (s *SQL) Template(ctx context.Context, accountID, id string) (string, error) {
	if err := checkLookup(ctx, accountID, id); err != nil {
		return "", err
	}
	var source string
	err := s.DB.QueryRow(ctx,
		`SELECT source FROM postroom_template_versions WHERE account_id = $1 AND id = $2
		ORDER BY version DESC LIMIT 1`,
		accountID, id).Scan(&source)
	switch {
	case errors.Is(err, sqldb.ErrNoRows):
		return "", notFound(accountID, id)
	case err != nil:
		return "", dbError(ctx, err)
	}
	return source, nil
}

// Put stores source as template id of account accountID, as its draft and
// its live version, replacing any template stored under the same ids (the
// live version before it stays among the kept versions); the next lookup,
// by any instance, sees it. An invalid id gives an error wrapping
// ErrInvalidID, a source the database cannot store (not UTF-8, or holding a
// NUL) one wrapping ErrInvalidSource, and nothing is stored. Unlike Add
// and Update, it takes the empty source, as it always has. A done ctx
// gives ctx.Err().
func (s *SQL) Put(ctx context.Context, accountID, id, source string) error {
	if err := checkLookup(ctx, accountID, id); err != nil {
		return err
	}
	if err := checkSource(accountID, id, source); err != nil && source != "" {
		return err
	}
	return s.inTx(ctx, func(tx sqldb.Tx) error {
		if _, err := tx.Exec(ctx,
			`INSERT INTO postroom_templates (account_id, id, draft) VALUES ($1, $2, $3)
			ON CONFLICT (account_id, id) DO UPDATE SET draft = EXCLUDED.draft, updated_at = `+now(tx),
			accountID, id, source); err != nil {
			return err
		}
		return s.publish(ctx, tx, accountID, id, source, 0)
	})
}

// Delete removes template id of account accountID and its versions.
// Deleting a template that is not stored does nothing; Remove reports it.
// An invalid id gives an error wrapping ErrInvalidID, a done ctx
// ctx.Err().
func (s *SQL) Delete(ctx context.Context, accountID, id string) error {
	if err := checkLookup(ctx, accountID, id); err != nil {
		return err
	}
	_, err := s.DB.Exec(ctx,
		`DELETE FROM postroom_templates WHERE account_id = $1 AND id = $2`,
		accountID, id)
	if err != nil {
		return dbError(ctx, err)
	}
	return nil
}

// dbError returns ctx.Err() if ctx has ended, whatever the driver made of
// the cancellation, or err wrapped.
func dbError(ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	return fmt.Errorf("templatestore: %w", err)
}
