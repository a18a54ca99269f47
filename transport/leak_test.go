package transport_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/postroom/postroom/internal/testkit/testenv"
)

// TestMain runs the package's tests, 8 parallel ones at once (the fault
// tables' cases mostly wait for a timeout to pass, and wait together),
// then fails if any goroutine they started is still running.
func TestMain(m *testing.M) {
	testenv.Parallel(8)
	goleak.VerifyTestMain(m)
}
