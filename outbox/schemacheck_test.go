package outbox_test

import (
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/testkit/pgtest"
	"github.com/postroom/postroom/outbox"
	"github.com/postroom/postroom/transport"
)

// TestNotMigrated: on a database that was never migrated, Check and
// Enqueue return an error wrapping ErrNotMigrated (Enqueue returned
// PostgreSQL's bare "relation does not exist"); after Migrate, Check
// passes and Enqueue works.
func TestNotMigrated(t *testing.T) {
	t.Parallel()
	pool, err := pgxpool.New(t.Context(), pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	m, err := postroom.New(transport.NewMemory(), postroom.Options{Auth: postroom.NoAuth{}})
	if err != nil {
		t.Fatal(err)
	}
	ob, err := outbox.New(m, pool, outbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := ob.Check(t.Context()); !errors.Is(err, outbox.ErrNotMigrated) {
		t.Fatalf("Check before Migrate: %v, want ErrNotMigrated", err)
	}
	enqueue := func() error {
		return pgx.BeginFunc(t.Context(), pool, func(tx pgx.Tx) error {
			_, err := ob.Enqueue(t.Context(), tx, postroom.OpSend, newCall("nm", 1), outbox.EnqueueOptions{})
			return err
		})
	}
	if err := enqueue(); !errors.Is(err, outbox.ErrNotMigrated) {
		t.Fatalf("Enqueue before Migrate: %v, want ErrNotMigrated", err)
	}
	if err := outbox.Migrate(t.Context(), pool); err != nil {
		t.Fatal(err)
	}
	if err := ob.Check(t.Context()); err != nil {
		t.Fatalf("Check after Migrate: %v", err)
	}
	if err := enqueue(); err != nil {
		t.Fatalf("Enqueue after Migrate: %v", err)
	}
	// Only River's tables missing: dropped by hand, as an application
	// that migrated River with its own tool to another schema would see.
	if _, err := pool.Exec(t.Context(), `DROP TABLE river_migration`); err != nil {
		t.Fatal(err)
	}
	if err := ob.Check(t.Context()); !errors.Is(err, outbox.ErrNotMigrated) {
		t.Fatalf("Check without River's migration table: %v, want ErrNotMigrated", err)
	}
}
