package main

// Until package events takes an sqldb.DB: its SQL on PostgreSQL only.

import (
	"context"
	"errors"

	"github.com/postroom/postroom/events"
	"github.com/postroom/postroom/sqldb"
	"github.com/postroom/postroom/sqldb/pgxdb"
)

var errEventsPostgresOnly = errors.New("the event log needs PostgreSQL for now")

func eventsNewSQL(db sqldb.DB, opts events.SQLOptions) (*events.SQL, error) {
	p, ok := db.(*pgxdb.DB)
	if !ok {
		return nil, errEventsPostgresOnly
	}
	return events.NewSQL(p.Pool(), opts)
}

func eventsMigrate(ctx context.Context, db sqldb.DB) error {
	p, ok := db.(*pgxdb.DB)
	if !ok {
		return errEventsPostgresOnly
	}
	return events.MigrateSQL(ctx, p.Pool())
}
