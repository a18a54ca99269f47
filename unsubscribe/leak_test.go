package unsubscribe_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails if any goroutine the tests started is still running.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
