package suppression_test

import (
	"testing"

	"github.com/postroom/postroom/suppression"
)

func TestMemoryContract(t *testing.T) {
	runContract(t, func(t *testing.T, opts suppression.Options) suppression.List {
		m, err := suppression.NewMemory(opts)
		if err != nil {
			t.Fatal(err)
		}
		return m
	})
}

func TestNewRefusesNegativePolicy(t *testing.T) {
	for _, p := range []suppression.Policy{{SoftBounces: -1}, {SoftWindow: -1}, {SoftExpiry: -1}} {
		if m, err := suppression.NewMemory(suppression.Options{Policy: p}); err == nil {
			t.Errorf("NewMemory(%+v) = %v, nil; want an error", p, m)
		}
		if s, err := suppression.NewSQL(nil, suppression.Options{Policy: p}); err == nil {
			t.Errorf("NewSQL(nil, %+v) = %v, nil; want an error", p, s)
		}
	}
}
