package console_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/postroom/postroom/internal/testkit/pgtest"
)

// TestMain runs the package's tests with pgtest's server (the queued
// calls' tests start one), stops it, then fails if any goroutine they
// started is still running (the browser tests' included).
func TestMain(m *testing.M) { goleak.VerifyTestMain(pgtest.Main(m)) }
