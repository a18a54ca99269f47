package outbox_test

import (
	"errors"
	"testing"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/testkit/dbtest"
	"github.com/postroom/postroom/outbox"
	"github.com/postroom/postroom/sqldb"
	"github.com/postroom/postroom/transport"
)

// TestNotMigrated: on a database that was never migrated, Check and
// Enqueue return an error wrapping ErrNotMigrated (Enqueue returned
// the engine's bare "relation does not exist"), on each engine; after
// Migrate, Check
// passes and Enqueue works.
func TestNotMigrated(t *testing.T) {
	t.Parallel()
	for _, eng := range dbtest.Engines() {
		t.Run(eng.Name, func(t *testing.T) {
			t.Parallel()
			testNotMigrated(t, eng.Open(t))
		})
	}
}

func testNotMigrated(t *testing.T, db sqldb.DB) {
	m, err := postroom.New(transport.NewMemory(), postroom.Options{Auth: postroom.NoAuth{}})
	if err != nil {
		t.Fatal(err)
	}
	ob, err := outbox.New(m, db, outbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := ob.Check(t.Context()); !errors.Is(err, outbox.ErrNotMigrated) {
		t.Fatalf("Check before Migrate: %v, want ErrNotMigrated", err)
	}
	enqueue := func() error {
		return sqldb.BeginFunc(t.Context(), db, func(tx sqldb.Tx) error {
			_, err := ob.Enqueue(t.Context(), tx, postroom.OpSend, newCall("nm", 1), outbox.EnqueueOptions{})
			return err
		})
	}
	if err := enqueue(); !errors.Is(err, outbox.ErrNotMigrated) {
		t.Fatalf("Enqueue before Migrate: %v, want ErrNotMigrated", err)
	}
	if err := outbox.Migrate(t.Context(), db); err != nil {
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
	if _, err := db.Exec(t.Context(), `DROP TABLE river_migration`); err != nil {
		t.Fatal(err)
	}
	if err := ob.Check(t.Context()); !errors.Is(err, outbox.ErrNotMigrated) {
		t.Fatalf("Check without River's migration table: %v, want ErrNotMigrated", err)
	}
}
