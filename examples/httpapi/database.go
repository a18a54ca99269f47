package main

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/postroom/postroom/events"
	"github.com/postroom/postroom/idempotency"
	"github.com/postroom/postroom/outbox"
	"github.com/postroom/postroom/sqldb/pgxdb"
	"github.com/postroom/postroom/suppression"
	"github.com/postroom/postroom/templatestore"
)

// databaseEnv is the environment variable read when -database-url is not
// given; a DSN may hold a password, which a flag would show to ps.
const databaseEnv = "POSTROOM_DATABASE_URL"

// maxDBConns bounds each instance's connections to PostgreSQL: lookups are
// short, and instances × maxDBConns must stay under the server's
// max_connections (100 by default).
const maxDBConns = 16

// applicationName is the application_name of the pool's connections
// (unless the DSN gives one), so that an operator finds them in
// pg_stat_activity.
const applicationName = "postroom-httpapi"

// openDatabase opens the one pool of the PostgreSQL database at dsn (a
// URL, postgres://user@host:5432/db, or libpq's key=value form), checks
// that it answers, and brings the tables of every part that keeps state
// there up to date: the template store's (templatestore.Migrate),
// River's and the outbox's (outbox.Migrate), the suppression list's
// (suppression.Migrate) and the event log's (events.Migrate), each
// safe when several
// instances start at once. The idempotency store migrates its own in
// newIdempotencyStore. An empty dsn gives a nil pool and a nil error:
// the server then keeps nothing in a database.
//
// The pool is the only one the server opens: the template store, the
// idempotency records and the outbox (River included) all take it, as
// *pgxpool.Pool, the handle River's driver takes and database/sql code
// reaches through stdlib.OpenDBFromPool. The caller closes it once the
// server has stopped.
func openDatabase(ctx context.Context, dsn string) (*pgxpool.Pool, error) {
	if dsn == "" {
		return nil, nil
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("-database-url: %w", err)
	}
	cfg.MaxConns = maxDBConns
	cfg.MaxConnIdleTime = 5 * time.Minute
	if _, ok := cfg.ConnConfig.RuntimeParams["application_name"]; !ok {
		cfg.ConnConfig.RuntimeParams["application_name"] = applicationName
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("-database-url: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("-database-url: %w", err)
	}
	if err := templatestore.Migrate(ctx, pgxdb.New(pool)); err != nil {
		pool.Close()
		return nil, fmt.Errorf("-database-url: %w", err)
	}
	if err := outbox.Migrate(ctx, pgxdb.New(pool)); err != nil {
		pool.Close()
		return nil, fmt.Errorf("-database-url: %w", err)
	}
	if err := suppression.Migrate(ctx, pgxdb.New(pool)); err != nil {
		pool.Close()
		return nil, fmt.Errorf("-database-url: %w", err)
	}
	if err := events.Migrate(ctx, pgxdb.New(pool)); err != nil {
		pool.Close()
		return nil, fmt.Errorf("-database-url: %w", err)
	}
	return pool, nil
}

// maxIdempotentCalls bounds the idempotent calls in flight on a database
// (httpapi.Options.MaxIdempotentCalls): each holds one connection for its
// whole length (the key's lock, and its records), and half of the pool
// stays free for the template lookups those calls make meanwhile: with
// every connection held, they would wait for each other for good.
const maxIdempotentCalls = maxDBConns / 2

// newIdempotencyStore returns the store of idempotent calls: in the
// database of pool when it is not nil (its tables created or updated
// first), shared by every instance on that database; nil otherwise, for
// the Handler's store in memory.
func newIdempotencyStore(pool *pgxpool.Pool) (idempotency.Store, error) {
	if pool == nil {
		return nil, nil
	}
	s, err := idempotency.NewSQL(pgxdb.New(pool), idempotency.Options{})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := idempotency.Migrate(ctx, pgxdb.New(pool)); err != nil {
		return nil, fmt.Errorf("-database-url: %w", err)
	}
	return s, nil
}
