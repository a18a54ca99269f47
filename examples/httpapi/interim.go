package main

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/events"
	"github.com/postroom/postroom/idempotency"
	"github.com/postroom/postroom/outbox"
	"github.com/postroom/postroom/sqldb/pgxdb"
	"github.com/postroom/postroom/suppression"
	"github.com/postroom/postroom/templatestore"
)

// poolOf is the pool under db, for the stores that take one until they
// take an sqldb.DB.
func poolOf(db *database) (*pgxpool.Pool, error) {
	if p, ok := db.DB.(*pgxdb.DB); ok {
		return p.Pool(), nil
	}
	return nil, errors.New("this part needs PostgreSQL for now")
}

func newIdempotencySQL(db *database) (*idempotency.SQL, error) {
	pool, err := poolOf(db)
	if err != nil {
		return nil, err
	}
	return idempotency.NewSQL(pool, idempotency.Options{})
}

func migrateIdempotency(ctx context.Context, db *database) error {
	s, err := newIdempotencySQL(db)
	if err != nil {
		return err
	}
	return s.Migrate(ctx)
}

func newTemplateSQL(db *database) (*templatestore.SQL, error) {
	pool, err := poolOf(db)
	if err != nil {
		return nil, err
	}
	return templatestore.NewSQL(pool), nil
}

func newSuppressionSQL(db *database) (*suppression.SQL, error) {
	pool, err := poolOf(db)
	if err != nil {
		return nil, err
	}
	return suppression.NewSQL(pool, suppression.Options{})
}

func newEventsSQL(db *database) (*events.SQL, error) {
	pool, err := poolOf(db)
	if err != nil {
		return nil, err
	}
	return events.NewSQL(pool, events.SQLOptions{})
}

func newOutbox(m *postroom.Mailer, db *database, opts outbox.Options) (*outbox.Outbox, error) {
	pool, err := poolOf(db)
	if err != nil {
		return nil, err
	}
	return outbox.New(m, pool, opts)
}
