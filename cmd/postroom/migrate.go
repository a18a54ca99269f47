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

// runMigrate applies every package's migrations: each is idempotent and
// takes its own lock, so running it again, or from two places, is safe.
func runMigrate(ctx context.Context, e *env, args []string) error {
	var c common
	fs := newFlags(e, "migrate", "", &c)
	if _, err := parse(fs, args, 0); err != nil {
		return err
	}
	db, err := c.open(ctx, e)
	if err != nil {
		return err
	}
	defer db.Close()
	steps := []struct {
		name string
		run  func(context.Context, sqldb.DB) error
	}{
		{"outbox (with River)", outbox.Migrate},
		{"templates", templatestore.Migrate},
		{"suppressions", suppression.Migrate},
		{"events", events.Migrate},
		{"idempotency records", idempotency.Migrate},
	}
	done := []string{}
	for _, s := range steps {
		if err := s.run(ctx, db.DB); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		done = append(done, s.name)
		if !c.json {
			fmt.Fprintf(e.stdout, "migrated %s\n", s.name)
		}
	}
	if c.json {
		return printJSON(e.stdout, map[string]any{"migrated": done})
	}
	return nil
}
