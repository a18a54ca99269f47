package pgtest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	// Registers "pgx" with database/sql, for adminExec.
	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/postroom/postroom/internal/testkit/testenv"
)

// EnvURL is the environment variable naming a PostgreSQL server to use
// instead of starting one: a DSN such as
// postgres://postgres@127.0.0.1:5432/postgres.
const EnvURL = "POSTROOM_TEST_DATABASE_URL"

// InstallHint says how to get a server when none is available.
const InstallHint = "install PostgreSQL (apt-get install postgresql) or set " + EnvURL + " to a server's DSN"

// errNotInstalled is the start error when neither EnvURL nor the binaries
// are there: a reason to skip locally, to fail under CI.
var errNotInstalled = errors.New("pgtest: PostgreSQL is not installed")

// errNoMain is the error of New and DSN when the package's TestMain does not
// run its tests through Main, which alone stops the server.
var errNoMain = errors.New("pgtest: TestMain must run the tests through pgtest.Main (func TestMain(m *testing.M) { goleak.VerifyTestMain(pgtest.Main(m)) })")

// state is the test binary's server: started by the first test that needs
// it, stopped by Main.
var state struct {
	mu      sync.Mutex
	inMain  bool    // Main is running the tests
	started bool    // start was tried; srv and err hold its outcome
	srv     *server // nil when EnvURL is used or start failed
	admin   string  // DSN of a database to create and drop databases from
	err     error
	// copyClause ends CREATE DATABASE: FILE_COPY on a server of ours
	// (PostgreSQL 15 or newer), which copies a small database in about
	// half the time of 15's default (WAL_LOG); empty for EnvURL's server,
	// which may be older.
	copyClause string
	// templates are the databases Template set up, by template; Run
	// drops them (on EnvURL's server; ours goes with its folder).
	templates map[*Template]*templateDB
}

// dbSeq numbers the databases created by this test binary.
var dbSeq atomic.Int64

// M runs a package's tests with a server available; see Main.
type M struct {
	m *testing.M
}

// Main returns m wrapped so that its Run stops the server, if a test
// started one, once the tests are done. Pass it to goleak.VerifyTestMain
// (or call its Run and os.Exit with the result).
func Main(m *testing.M) *M { return &M{m: m} }

// Run runs the tests and stops the server. It returns the exit code of the
// tests, or 1 if they passed but the server did not stop cleanly.
func (w *M) Run() int {
	state.mu.Lock()
	state.inMain = true
	state.mu.Unlock()

	code := w.m.Run()

	state.mu.Lock()
	defer state.mu.Unlock()
	state.inMain = false
	if err := dropTemplates(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		if code == 0 {
			code = 1
		}
	}
	if state.srv != nil {
		if err := state.srv.stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			if code == 0 {
				code = 1
			}
		}
		state.srv = nil
	}
	state.started = false
	state.copyClause = ""
	return code
}

// NewPool returns a pgx pool on a database created for t alone, empty,
// closed and dropped when t ends: the handle postroom's PostgreSQL
// packages take. It skips or fails t when no server is available.
func NewPool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), DSN(t))
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	// Registered after DSN's cleanup, so it runs first: the connections
	// are closed before the database is dropped.
	t.Cleanup(pool.Close)
	return pool
}

// DSN creates a database for t alone and returns its DSN, for code that
// opens its own connections (another process, a pool of its own). The
// database is dropped when t ends, even if connections to it are still
// open. It skips or fails t when no server is available.
func DSN(t testing.TB) string {
	t.Helper()
	return copyDSN(t, nil)
}

// copyDSN is DSN for a copy of tp's database, or of an empty one when tp is
// nil.
func copyDSN(t testing.TB, tp *Template) string {
	t.Helper()
	admin, err := adminDSN()
	if err != nil {
		unavailable(t, err)
		return ""
	}
	from := "template0"
	if tp != nil {
		if from, err = tp.database(admin); err != nil {
			t.Fatal(err)
			return ""
		}
	}

	name := newName()
	dsn, err := withDatabase(admin, name)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background() // t.Context is done by the time cleanups run
	if err := adminExec(ctx, admin, "CREATE DATABASE "+name+" TEMPLATE "+from+copyClause()); err != nil {
		t.Fatalf("pgtest: create database: %v", err)
	}
	t.Cleanup(func() {
		if err := adminExec(ctx, admin, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("pgtest: drop database: %v", err)
		}
	})
	return dsn
}

// newName returns a database name unique within the binary, carrying its
// process id.
func newName() string {
	return fmt.Sprintf("pgtest_%d_%d", os.Getpid(), dbSeq.Add(1))
}

// copyClause returns state.copyClause.
func copyClause() string {
	state.mu.Lock()
	defer state.mu.Unlock()
	return state.copyClause
}

// unavailable ends t for err: a skip naming InstallHint when err says
// PostgreSQL is not installed (a failure under CI=true, see
// internal/testkit/testenv), a failure for any other error.
func unavailable(t testing.TB, err error) {
	t.Helper()
	if errors.Is(err, errNotInstalled) {
		testenv.Missing(t, err.Error(), InstallHint)
		return
	}
	t.Fatal(err)
}

// adminDSN returns the DSN of the server's maintenance database, starting
// the server on first use.
func adminDSN() (string, error) {
	state.mu.Lock()
	defer state.mu.Unlock()
	if !state.inMain {
		return "", errNoMain
	}
	if !state.started {
		state.started = true
		if url := os.Getenv(EnvURL); url != "" {
			state.admin = url
		} else {
			state.srv, state.err = start()
			if state.err == nil {
				state.admin = state.srv.dsn("postgres")
				if state.srv.version() >= 15 {
					state.copyClause = " STRATEGY FILE_COPY"
				}
			}
		}
	}
	return state.admin, state.err
}

// adminExec runs one statement on the maintenance database at dsn, on a
// connection of its own.
func adminExec(ctx context.Context, dsn, stmt string) error {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = db.ExecContext(ctx, stmt)
	return err
}
