package main

import (
	"context"
	"fmt"

	"github.com/postroom/postroom/events"
	"github.com/postroom/postroom/idempotency"
	"github.com/postroom/postroom/outbox"
	"github.com/postroom/postroom/sqldb"
	"github.com/postroom/postroom/suppression"
	"github.com/postroom/postroom/templatestore"
)

// migrate brings the tables of every part that keeps state in db up to
// date: the template store's, River's and the outbox's, the suppression
// list's, the event log's and the idempotency records'. Each migration is
// safe when several instances start at once on PostgreSQL.
func migrate(ctx context.Context, db *database) error {
	for _, m := range []struct {
		name string
		run  func(context.Context, sqldb.DB) error
	}{
		{"templates", templatestore.Migrate},
		{"outbox", outbox.Migrate},
		{"suppressions", suppression.Migrate},
		{"events", events.Migrate},
		{"idempotency records", idempotency.Migrate},
	} {
		if err := m.run(ctx, db.DB); err != nil {
			return fmt.Errorf("migrating the %s: %w", m.name, err)
		}
	}
	return nil
}
