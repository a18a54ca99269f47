package program

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain runs the package's tests, then fails if any goroutine they
// started is still running, except raymond's: the reference's lexer runs
// in a goroutine that stays blocked on its channel when the parser stops at
// an error (TestParseEquivalence's hostile inputs do that on purpose). The
// program package itself starts no goroutine.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction("github.com/aymerick/raymond/lexer.(*Lexer).run"))
}
