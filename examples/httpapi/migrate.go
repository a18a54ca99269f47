package main

import (
	"context"
	"fmt"

	"github.com/postroom/postroom/events"
	"github.com/postroom/postroom/outbox"
	"github.com/postroom/postroom/suppression"
	"github.com/postroom/postroom/templatestore"
)

// migrate brings the tables of every part that keeps state in db up to
// date: the template store's, River's and the outbox's, the suppression
// list's, the event log's and the idempotency records'. Each migration is
// safe when several instances start at once on PostgreSQL.
func migrate(ctx context.Context, db *database) error {
	pool, err := poolOf(db)
	if err != nil {
		return err
	}
	for _, m := range []struct {
		name string
		run  func(context.Context) error
	}{
		{"templates", func(ctx context.Context) error { return templatestore.MigrateSQL(ctx, pool) }},
		{"outbox", func(ctx context.Context) error { return outbox.Migrate(ctx, pool) }},
		{"suppressions", func(ctx context.Context) error { return suppression.Migrate(ctx, pool) }},
		{"events", func(ctx context.Context) error { return events.MigrateSQL(ctx, pool) }},
		{"idempotency", func(ctx context.Context) error { return migrateIdempotency(ctx, db) }},
	} {
		if err := m.run(ctx); err != nil {
			return fmt.Errorf("migrating the %s: %w", m.name, err)
		}
	}
	return nil
}
