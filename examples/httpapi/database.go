package main

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/postroom/postroom/idempotency"

	// pgx's database/sql driver, registered as "pgx". Only this program
	// links a driver: postroom and templatestore import none.
	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/postroom/postroom/templatestore"
)

// databaseEnv is the environment variable read when -database-url is not
// given; a DSN may hold a password, which a flag would show to ps.
const databaseEnv = "POSTROOM_DATABASE_URL"

// maxDBConns bounds each instance's connections to PostgreSQL: lookups are
// short, and instances × maxDBConns must stay under the server's
// max_connections (100 by default).
const maxDBConns = 16

// openDatabase opens the PostgreSQL database at dsn (a URL,
// postgres://user@host:5432/db, or libpq's key=value form) with pgx's
// database/sql driver, checks that it answers, and brings the template
// store's tables up to date with templatestore.MigrateSQL, which is safe
// when several instances start at once. An empty dsn gives a nil *sql.DB
// and a nil error: the server then keeps nothing in a database.
//
// The *sql.DB is the one pool the server shares for everything it keeps
// in the database; the caller closes it once the server has stopped.
func openDatabase(ctx context.Context, dsn string) (*sql.DB, error) {
	if dsn == "" {
		return nil, nil
	}
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return nil, fmt.Errorf("-database-url: %w", err)
	}
	db.SetMaxOpenConns(maxDBConns)
	db.SetMaxIdleConns(maxDBConns)
	db.SetConnMaxIdleTime(5 * time.Minute)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("-database-url: %w", err)
	}
	if err := templatestore.MigrateSQL(ctx, db); err != nil {
		db.Close()
		return nil, fmt.Errorf("-database-url: %w", err)
	}
	return db, nil
}

// maxIdempotentCalls bounds the idempotent calls in flight on a database
// (httpapi.Options.MaxIdempotentCalls): each holds one connection for its
// whole length (the key's lock, and its records), and half of the pool
// stays free for the template lookups those calls make meanwhile: with
// every connection held, they would wait for each other for good.
const maxIdempotentCalls = maxDBConns / 2

// newIdempotencyStore returns the store of idempotent calls: in db when it
// is not nil (its tables created or updated first), shared by every
// instance on that database; nil otherwise, for the Handler's store in
// memory.
func newIdempotencyStore(db *sql.DB) (idempotency.Store, error) {
	if db == nil {
		return nil, nil
	}
	s, err := idempotency.NewSQL(db, idempotency.Options{})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := s.Migrate(ctx); err != nil {
		return nil, fmt.Errorf("-database-url: %w", err)
	}
	return s, nil
}
