package pgtest

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain runs the package's tests with a server, stops it, then fails if
// any goroutine they started is still running.
func TestMain(m *testing.M) { goleak.VerifyTestMain(Main(m)) }
