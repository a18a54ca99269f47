package templatestore_test

import (
	"testing"

	"github.com/postroom/postroom/internal/testkit/pgtest"
	"go.uber.org/goleak"
)

// TestMain runs the package's tests with a PostgreSQL for the SQL store's
// (started on first use, stopped at the end), then fails if any goroutine
// they started is still running.
func TestMain(m *testing.M) { goleak.VerifyTestMain(pgtest.Main(m)) }
