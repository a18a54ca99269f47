package main

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/goleak"

	"github.com/postroom/postroom/internal/testkit/pgtest"
)

// TestMain runs the package's tests with a PostgreSQL for those that need
// one (started on first use, stopped at the end), then fails if any
// goroutine they started is still running.
func TestMain(m *testing.M) { goleak.VerifyTestMain(pgtest.Main(m)) }

// migrated is the database the tests' databases are copied from:
// openDatabase's migrations (templates, outbox and River, suppressions,
// events) run once per test binary. openDatabase still runs on each copy
// (finding nothing to migrate); TestOpenDatabase starts from an empty
// database.
var migrated = &pgtest.Template{Setup: func(ctx context.Context, pool *pgxpool.Pool) error {
	db, err := openDatabase(ctx, pool.Config().ConnString())
	if err != nil {
		return err
	}
	db.Close()
	return nil
}}
