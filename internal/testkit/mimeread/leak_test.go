package mimeread

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain runs the package's tests, then fails if any goroutine they
// started is still running.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
