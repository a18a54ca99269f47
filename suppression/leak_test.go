package suppression_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/postroom/postroom/internal/testkit/pgtest"
)

// TestMain runs the package's tests with a PostgreSQL for SQL's (started
// on first use, stopped at the end), then fails if any goroutine they
// started is still running.
func TestMain(m *testing.M) { goleak.VerifyTestMain(pgtest.Main(m)) }
