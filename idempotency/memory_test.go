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

// abandon lets the key go as the death of the holder's process would for
// a shared store: the next Claim takes it over and c's writes are refused.
// Tests use it to simulate a crash.
func (c *memClaim) abandon() {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	if c.r.holder == c.gen {
		c.r.holder = 0
		close(c.r.released)
	}
}
