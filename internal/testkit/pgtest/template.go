package pgtest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// setupTimeout bounds a Template's Setup; it guards against a hang.
const setupTimeout = 2 * time.Minute

// Template is a database that tests start from instead of an empty one:
// Setup runs once per test binary, on a database of its own, and every
// database the Template gives a test is a copy of it (CREATE DATABASE ...
// TEMPLATE), so that a package's migrations run once, not once per test.
// Declare one per package, as a package-level variable:
//
//	var migrated = &pgtest.Template{Setup: func(ctx context.Context, pool *pgxpool.Pool) error {
//		return outbox.Migrate(ctx, pool)
//	}}
//
//	pool := migrated.NewPool(t) // a fresh, migrated database for t alone
//
// Its methods are safe for concurrent use; the first caller runs Setup
// while the others wait. A Setup that fails fails every test asking for
// a copy, with its error.
type Template struct {
	// Setup prepares the template on pool (migrations, fixtures every test
	// shares). The pool is closed after it returns: a database is copied
	// only while nobody is connected to it, so Setup must not keep the
	// pool, nor start anything that outlives it. Nil means an empty
	// database.
	Setup func(ctx context.Context, pool *pgxpool.Pool) error
}

// templateDB is a Template's database on the current server.
type templateDB struct {
	once sync.Once
	name string
	err  error
}

// DSN creates a database for t alone, a copy of tp's, and returns its
// DSN; it is dropped when t ends, as DSN's.
func (tp *Template) DSN(t testing.TB) string {
	t.Helper()
	return copyDSN(t, tp)
}

// NewPool returns a pgx pool on a database for t alone, a copy of tp's,
// closed and dropped when t ends, as NewPool's.
func (tp *Template) NewPool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), tp.DSN(t))
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// database returns the name of tp's database on the server at admin,
// creating it and running Setup on the first call.
func (tp *Template) database(admin string) (string, error) {
	state.mu.Lock()
	if state.templates == nil {
		state.templates = map[*Template]*templateDB{}
	}
	db := state.templates[tp]
	if db == nil {
		db = &templateDB{name: newName()}
		state.templates[tp] = db
	}
	clause := state.copyClause
	state.mu.Unlock()

	db.once.Do(func() { db.err = tp.setup(admin, db.name, clause) })
	return db.name, db.err
}

// setup creates the database name on the server at admin and runs Setup
// on it.
func (tp *Template) setup(admin, name, clause string) error {
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()
	if err := adminExec(ctx, admin, "CREATE DATABASE "+name+" TEMPLATE template0"+clause); err != nil {
		return fmt.Errorf("pgtest: create template database: %w", err)
	}
	if tp.Setup == nil {
		return nil
	}
	dsn, err := withDatabase(admin, name)
	if err != nil {
		return err
	}
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		return fmt.Errorf("pgtest: template: %w", err)
	}
	defer pool.Close()
	if err := tp.Setup(ctx, pool); err != nil {
		return fmt.Errorf("pgtest: template's Setup: %w", err)
	}
	return nil
}

// dropTemplates drops the templates' databases and forgets them. The
// caller holds state.mu.
func dropTemplates() error {
	defer func() { state.templates = nil }()
	if state.srv != nil || state.admin == "" {
		return nil // our server's folder goes with it
	}
	for _, db := range state.templates {
		if err := adminExec(context.Background(), state.admin, "DROP DATABASE IF EXISTS "+db.name+" WITH (FORCE)"); err != nil {
			return fmt.Errorf("pgtest: drop template database: %w", err)
		}
	}
	return nil
}
