package main

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/events"
	"github.com/postroom/postroom/idempotency"
	"github.com/postroom/postroom/outbox"
	"github.com/postroom/postroom/sqldb"
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
	return idempotency.NewSQL(db.DB, idempotency.Options{})
}

func migrateEvents(ctx context.Context, db sqldb.DB) error {
	p, ok := db.(*pgxdb.DB)
	if !ok {
		return errors.New("events need PostgreSQL for now")
	}
	return events.MigrateSQL(ctx, p.Pool())
}

func migrateOutbox(ctx context.Context, db sqldb.DB) error {
	p, ok := db.(*pgxdb.DB)
	if !ok {
		return errors.New("the outbox needs PostgreSQL for now")
	}
	return outbox.Migrate(ctx, p.Pool())
}

func newTemplateSQL(db *database) (*templatestore.SQL, error) {
	return templatestore.NewSQL(db.DB), nil
}

func newSuppressionSQL(db *database) (*suppression.SQL, error) {
	return suppression.NewSQL(db.DB, suppression.Options{})
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
