package idempotency

import (
	"errors"
	"testing"
	"time"

	"github.com/postroom/postroom/internal/testkit/dbtest"
	"github.com/postroom/postroom/option"
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

func TestNewRefusesNegativeRetention(t *testing.T) {
	_, err := NewMemory(Options{Retention: -time.Second})
	var oe *option.Error
	if !errors.As(err, &oe) || oe.Op != "idempotency.NewMemory" || oe.Field != "Options.Retention" {
		t.Errorf("NewMemory with a negative Retention = %v; want an *option.Error for Options.Retention", err)
	}
	_, err = NewSQL(dbtest.SQLite(t), Options{Retention: -time.Second})
	if !errors.As(err, &oe) || oe.Op != "idempotency.NewSQL" || oe.Field != "Options.Retention" {
		t.Errorf("NewSQL with a negative Retention = %v; want an *option.Error for Options.Retention", err)
	}
}
