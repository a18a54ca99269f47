package main

import (
	"context"
	"fmt"

	"github.com/postroom/postroom/events"
	"github.com/postroom/postroom/outbox"
	"github.com/postroom/postroom/sqldb/pgxdb"
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
	pool, err := c.open(ctx, e)
	if err != nil {
		return err
	}
	defer pool.Close()
	steps := []struct {
		name string
		run  func(context.Context) error
	}{
		{"outbox (with River)", func(ctx context.Context) error { return outbox.Migrate(ctx, pgxdb.New(pool)) }},
		{"templates", func(ctx context.Context) error { return templatestore.Migrate(ctx, pgxdb.New(pool)) }},
		{"suppressions", func(ctx context.Context) error { return suppression.Migrate(ctx, pgxdb.New(pool)) }},
		{"events", func(ctx context.Context) error { return events.Migrate(ctx, pgxdb.New(pool)) }},
	}
	done := []string{}
	for _, s := range steps {
		if err := s.run(ctx); err != nil {
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
