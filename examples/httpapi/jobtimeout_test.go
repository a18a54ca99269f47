package main

import (
	"testing"
	"time"
)

// TestJobTimeoutFor: a run's timeout leaves room for its last writes
// before River may rescue its job, whatever -outbox-rescue-after says.
func TestJobTimeoutFor(t *testing.T) {
	for _, rescue := range []time.Duration{2 * time.Second, 10 * time.Second, 20 * time.Second, 30 * time.Second, defaultRescueAfter, time.Hour} {
		got := jobTimeoutFor(rescue)
		if got <= 0 || got > jobTimeout {
			t.Errorf("rescue %v: job timeout %v, want in (0, %v]", rescue, got, jobTimeout)
		}
		if rescue > 2*writeRetry && got+writeRetry > rescue {
			t.Errorf("rescue %v: job timeout %v leaves less than %v for the last writes", rescue, got, writeRetry)
		}
		if rescue <= 2*writeRetry && got > rescue/2 {
			t.Errorf("rescue %v: job timeout %v, want at most half", rescue, got)
		}
	}
	if got := jobTimeoutFor(defaultRescueAfter); got != jobTimeout {
		t.Errorf("default rescue: job timeout %v, want %v", got, jobTimeout)
	}
}
