package main

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/postroom/postroom/events"
	"github.com/postroom/postroom/outbox"
	"github.com/postroom/postroom/sqldb"
	"github.com/postroom/postroom/sqldb/pgxdb"
)

// poolOf is the pool under d, for the stores that take one until they
// take an sqldb.DB.
func poolOf(d *database) (*pgxpool.Pool, error) {
	if p, ok := d.DB.(*pgxdb.DB); ok {
		return p.Pool(), nil
	}
	return nil, errors.New("this command needs PostgreSQL for now")
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
