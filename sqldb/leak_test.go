package sqldb_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/postroom/postroom/internal/testkit/pgtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(pgtest.Main(m)) }
