package templatestore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// ErrInvalidSource is wrapped by the error of SQL.Put for a source that is
// not valid UTF-8 or holds a NUL byte, which PostgreSQL's text cannot
// store.
var ErrInvalidSource = errors.New("templatestore: source is not UTF-8 text without NUL")

// SQL is a TemplateStore in a PostgreSQL database, reached through the
// application's pgx pool, for applications that run several instances
// sharing their templates. It reads and writes the table postroom_templates, which
// MigrateSQL creates; each lookup is one query, so a template changed by
// Put, by another instance or by hand is seen by the next call, and
// nothing is cached.
//
// The pool is the one the application already has (see the package
// documentation, # SQL): the store takes no connection of its own but for
// the length of each query. Every lookup keeps
// the account id in its WHERE clause, so one account never reaches
// another's templates, and ids that break the rules in the package
// documentation are refused before any query.
//
// The zero value has no Pool and must not be used; NewSQL returns an SQL
// ready to use. An SQL is safe for concurrent use, as *pgxpool.Pool is.
// Pool must not be changed once it is in use; the SQL never closes it.
type SQL struct {
	// Pool is the pool of the database holding postroom_templates.
	Pool *pgxpool.Pool
}

// NewSQL returns an SQL reading and writing templates in the database of
// pool. It does not touch the database; call MigrateSQL once before the
// first lookup.
func NewSQL(pool *pgxpool.Pool) *SQL {
	return &SQL{Pool: pool}
}

// Template returns the source of template id of account accountID.
//
// A template that is not stored, or an invalid id, gives an error wrapping
// postroom.ErrTemplateNotFound; a ctx done before or during the query gives
// ctx.Err(). Other errors are the database's, wrapped (a missing table,
// when MigrateSQL was not run, is one).
func (s *SQL) Template(ctx context.Context, accountID, id string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if err := checkIDs(accountID, id); err != nil {
		return "", err
	}
	var source string
	err := s.Pool.QueryRow(ctx,
		`SELECT source FROM postroom_templates WHERE account_id = $1 AND id = $2`,
		accountID, id).Scan(&source)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return "", notFound(accountID, id)
	case err != nil:
		return "", dbError(ctx, err)
	}
	return source, nil
}

// Put stores source as template id of account accountID, replacing any
// template stored under the same ids; the next lookup, by any instance,
// sees it. An invalid id gives an error wrapping ErrInvalidID, a source
// PostgreSQL cannot store one wrapping ErrInvalidSource, and nothing is
// stored. A done ctx gives ctx.Err().
func (s *SQL) Put(ctx context.Context, accountID, id, source string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := checkIDs(accountID, id); err != nil {
		return err
	}
	if !utf8.ValidString(source) || strings.IndexByte(source, 0) >= 0 {
		return fmt.Errorf("%w: account %q, template %q", ErrInvalidSource, accountID, id)
	}
	_, err := s.Pool.Exec(ctx,
		`INSERT INTO postroom_templates (account_id, id, source) VALUES ($1, $2, $3)
		ON CONFLICT (account_id, id) DO UPDATE SET source = EXCLUDED.source, updated_at = now()`,
		accountID, id, source)
	if err != nil {
		return dbError(ctx, err)
	}
	return nil
}

// Delete removes template id of account accountID. Deleting a template that
// is not stored does nothing. An invalid id gives an error wrapping
// ErrInvalidID, a done ctx ctx.Err().
func (s *SQL) Delete(ctx context.Context, accountID, id string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := checkIDs(accountID, id); err != nil {
		return err
	}
	_, err := s.Pool.Exec(ctx,
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
