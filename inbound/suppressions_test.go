package inbound_test

import (
	"testing"

	"github.com/postroom/postroom/suppression"
)

// newSuppressions is the suppression list the tests observe into.
func newSuppressions(t testing.TB) *suppression.Memory {
	t.Helper()
	m, err := suppression.NewMemory(suppression.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return m
}
