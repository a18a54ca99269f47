package postroom_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/postroom/postroom/internal/testkit/testenv"
)

// TestMain runs the package's tests, then fails if any goroutine they
// started is still running. The parallel tests are those whose time goes
// to programs they run (go, the README's PostgreSQL, SpamAssassin, Python,
// dkimpy, openssl): they all run at once unless -parallel says otherwise.
func TestMain(m *testing.M) {
	testenv.Parallel(6)
	goleak.VerifyTestMain(m)
}
