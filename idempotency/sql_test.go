package idempotency

import (
	"testing"

	"github.com/postroom/postroom/internal/testkit/pgtest"
	"go.uber.org/goleak"
)

// TestMain runs the tests with pgtest's server, stops it, then checks
// that no goroutine is left.
func TestMain(m *testing.M) { goleak.VerifyTestMain(pgtest.Main(m)) }

func sqlHarness() harness {
	return harness{
		store: func(t *testing.T, opts Options) Store {
			s, err := NewSQL(pgtest.NewPool(t), opts)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Migrate(t.Context()); err != nil {
				t.Fatal(err)
			}
			return s
		},
		// The holder's process dies: its lock connection ends, and the
		// server releases the advisory lock with the session.
		kill: func(t *testing.T, c Claim) {
			sc := c.(*sqlClaim)
			sc.mu.Lock()
			defer sc.mu.Unlock()
			closeConn(sc.conn)
		},
	}
}

func TestSQLContract(t *testing.T) { runContract(t, sqlHarness()) }
