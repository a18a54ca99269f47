package inbound_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/postroom/postroom/internal/testkit/pgtest"
)

// TestMain stops the test PostgreSQL server, then fails if any goroutine
// the tests started is still running: Serve must leave none behind.
func TestMain(m *testing.M) { goleak.VerifyTestMain(pgtest.Main(m)) }
