package idempotency

import (
	"testing"

	"github.com/postroom/postroom/internal/testkit/dbtest"
	"github.com/postroom/postroom/internal/testkit/pgtest"
	"github.com/postroom/postroom/sqldb"
	"go.uber.org/goleak"
)

// TestMain runs the tests with pgtest's server, stops it, then checks
// that no goroutine is left.
func TestMain(m *testing.M) { goleak.VerifyTestMain(pgtest.Main(m)) }

// newSQL returns a SQL store with opts in a fresh database of e, migrated.
func newSQL(t testing.TB, e dbtest.Engine, opts Options) *SQL {
	t.Helper()
	db := e.Open(t)
	if err := Migrate(t.Context(), db); err != nil {
		t.Fatal(err)
	}
	s, err := NewSQL(db, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func sqlHarness(e dbtest.Engine) harness {
	return harness{
		store: func(t *testing.T, opts Options) Store { return newSQL(t, e, opts) },
		kill:  killSQL,
	}
}

// killSQL makes c's holder die as a crashed process does. On PostgreSQL
// the server ends the session of the lock's transaction, and with it the
// lock. On SQLite the process's lock lets the key go, as the process's
// end would.
func killSQL(t *testing.T, c Claim) {
	sc := c.(*sqlClaim)
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if sc.s.db.Engine() == sqldb.SQLite {
		sc.s.locks.unlock(sc.hold)
		return
	}
	var pid int32
	if err := sc.tx.QueryRow(t.Context(), "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	var ended bool
	if err := sc.s.db.QueryRow(t.Context(), "SELECT pg_terminate_backend($1)", pid).Scan(&ended); err != nil || !ended {
		t.Fatalf("pg_terminate_backend: %v, %v", ended, err)
	}
}
