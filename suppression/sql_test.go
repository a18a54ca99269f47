package suppression_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/postroom/postroom/internal/pgtest"
	"github.com/postroom/postroom/suppression"
)

// newPool opens a pool on a fresh database, not migrated.
func newPool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.New(t.Context(), pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

func TestSQLContract(t *testing.T) {
	pool := newPool(t)
	if err := suppression.Migrate(t.Context(), pool); err != nil {
		t.Fatal(err)
	}
	// One database for every case: each uses account ids of its own.
	runContract(t, func(t *testing.T, opts suppression.Options) suppression.List {
		s, err := suppression.NewSQL(pool, opts)
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// TestMigrateConcurrent starts four instances on one empty database at
// once: each Migrate succeeds, the schema is applied once, and a later
// Migrate does nothing.
func TestMigrateConcurrent(t *testing.T) {
	pool := newPool(t)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() { errs[i] = suppression.Migrate(t.Context(), pool) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Migrate #%d: %v", i, err)
		}
	}
	if err := suppression.Migrate(t.Context(), pool); err != nil {
		t.Errorf("Migrate again: %v", err)
	}
	var versions, current int
	if err := pool.QueryRow(t.Context(), `SELECT count(*), max(version) FROM postroom_suppression_schema`).Scan(&versions, &current); err != nil {
		t.Fatal(err)
	}
	if versions != suppression.SchemaVersion || current != suppression.SchemaVersion {
		t.Errorf("schema table: %d rows, version %d; want %d and %d", versions, current, suppression.SchemaVersion, suppression.SchemaVersion)
	}
}

// TestMigrateNewerSchema: a database migrated by a newer release is left
// alone and reported.
func TestMigrateNewerSchema(t *testing.T) {
	pool := newPool(t)
	if err := suppression.Migrate(t.Context(), pool); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(t.Context(), `INSERT INTO postroom_suppression_schema (version) VALUES ($1)`, suppression.SchemaVersion+1); err != nil {
		t.Fatal(err)
	}
	if err := suppression.Migrate(t.Context(), pool); err == nil {
		t.Error("Migrate over a newer schema: nil; want an error")
	}
}

// TestSQLCanceled: a call whose ctx has ended reports ctx's error.
func TestSQLCanceled(t *testing.T) {
	pool := newPool(t)
	if err := suppression.Migrate(t.Context(), pool); err != nil {
		t.Fatal(err)
	}
	s, err := suppression.NewSQL(pool, suppression.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := s.Suppressed(ctx, "a", []string{"ann@example.com"}, time.Now()); !errors.Is(err, context.Canceled) {
		t.Errorf("Suppressed with a canceled ctx: %v; want context.Canceled", err)
	}
}
