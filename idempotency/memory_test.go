package idempotency

import (
	"testing"
)

func memoryHarness() harness {
	return harness{
		store: func(t *testing.T, opts Options) Store {
			s, err := NewMemory(opts)
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
		kill: func(t *testing.T, c Claim) { c.(*memClaim).abandon() },
	}
}

func TestMemoryContract(t *testing.T) { runContract(t, memoryHarness()) }
