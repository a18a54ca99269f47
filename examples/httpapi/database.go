package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/postroom/postroom/idempotency"
	"github.com/postroom/postroom/sqldb"
	"github.com/postroom/postroom/sqldb/pgxdb"
	"github.com/postroom/postroom/sqldb/sqlitedb"
)

// databaseEnv is the environment variable read when -database-url is not
// given; a DSN may hold a password, which a flag would show to ps.
const databaseEnv = "POSTROOM_DATABASE_URL"

// defaultDatabaseURL is the database without -database-url nor
// $POSTROOM_DATABASE_URL: the SQLite file postroom.db in the working
// directory, for one process.
const defaultDatabaseURL = "sqlite:postroom.db"

// databaseForms names the URLs -database-url takes, for messages.
const databaseForms = "postgres://user@host:5432/db (PostgreSQL, for several instances) or sqlite:PATH (one SQLite file, for one process)"

// maxDBConns bounds each instance's connections to PostgreSQL: lookups are
// short, and instances × maxDBConns must stay under the server's
// max_connections (100 by default).
const maxDBConns = 16

// applicationName is the application_name of the pool's connections
// (unless the DSN gives one), so that an operator finds them in
// pg_stat_activity.
const applicationName = "postroom-httpapi"

// database is the server's one database: what every part that keeps
// state there takes, and what closes it.
type database struct {
	// DB is a *pgxdb.DB (PostgreSQL, through one pool) or a *sqlitedb.DB
	// (one SQLite file): the stores take it, and the outbox runs River on
	// the engine's driver by its type.
	sqldb.DB
	close func() error
}

// Close closes the database, once the server has stopped.
func (d *database) Close() error { return d.close() }

// sqlitePath returns the file of a sqlite: URL: sqlite:PATH, or
// sqlite://PATH, PATH as it is (relative to the working directory, or
// absolute); ok is false for another URL.
func sqlitePath(url string) (path string, ok bool) {
	path, ok = strings.CutPrefix(url, "sqlite:")
	return strings.TrimPrefix(path, "//"), ok
}

// openDatabase opens the database at url: a SQLite file (sqlite:PATH,
// created if needed, refused while another process has it open), or
// PostgreSQL (postgres://user@host:5432/db, postgresql://..., or libpq's
// key=value form) through one pool, checked to answer. It brings the
// tables of every part that keeps state there up to date (migrate). An
// empty url gives a nil database and a nil error: the server then keeps
// nothing in a database (-in-memory).
//
// The database is the only one the server opens: the template store, the
// suppression list, the event log, the idempotency records and the
// outbox (River included) all take it. The caller closes it once the
// server has stopped.
func openDatabase(ctx context.Context, url string) (*database, error) {
	if url == "" {
		return nil, nil
	}
	var db *database
	if path, ok := sqlitePath(url); ok {
		if path == "" {
			return nil, fmt.Errorf("-database-url %s: no file: want sqlite:PATH, such as %s", url, defaultDatabaseURL)
		}
		s, err := sqlitedb.Open(ctx, path, sqlitedb.Options{})
		if err != nil {
			return nil, fmt.Errorf("-database-url: %w", err)
		}
		db = &database{DB: s, close: s.Close}
	} else {
		pool, err := openPool(ctx, url)
		if err != nil {
			return nil, fmt.Errorf("-database-url: %w", err)
		}
		db = &database{DB: pgxdb.New(pool), close: func() error { pool.Close(); return nil }}
	}
	if err := migrate(ctx, db); err != nil {
		return nil, errors.Join(fmt.Errorf("-database-url: %w", err), db.Close())
	}
	return db, nil
}

// openPool opens the one pool of the PostgreSQL database at dsn and checks
// that it answers.
func openPool(ctx context.Context, dsn string) (*pgxpool.Pool, error) {
	if !strings.HasPrefix(dsn, "postgres://") && !strings.HasPrefix(dsn, "postgresql://") &&
		(strings.Contains(dsn, "://") || !strings.Contains(dsn, "=")) {
		// Not repeated: it may hold a password.
		return nil, fmt.Errorf("not a database URL: want %s", databaseForms)
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	cfg.MaxConns = maxDBConns
	cfg.MaxConnIdleTime = 5 * time.Minute
	if _, ok := cfg.ConnConfig.RuntimeParams["application_name"]; !ok {
		cfg.ConnConfig.RuntimeParams["application_name"] = applicationName
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	return pool, nil
}

// maxIdempotentCalls bounds the idempotent calls in flight on PostgreSQL
// (httpapi.Options.MaxIdempotentCalls): each holds one connection for its
// whole length (the key's lock, and its records), and half of the pool
// stays free for the template lookups those calls make meanwhile: with
// every connection held, they would wait for each other for good.
const maxIdempotentCalls = maxDBConns / 2

// newIdempotencyStore returns the store of idempotent calls: in db when
// it is not nil, shared by every instance on a PostgreSQL database; nil
// otherwise, for the Handler's store in memory.
func newIdempotencyStore(db *database) (idempotency.Store, error) {
	if db == nil {
		return nil, nil
	}
	return idempotency.NewSQL(db.DB, idempotency.Options{})
}
