package postroom

import (
	"context"
	"errors"
	"testing"
)

// TestInFlightProbe checks the gate's steps: the first recipient is the
// probe and weighs the whole budget; a probe that made no message leaves
// the next recipient to probe; once a footprint is known, every recipient
// weighs footprintFactor times the largest, and waiting for a probe ends
// with the waiter's ctx.
func TestInFlightProbe(t *testing.T) {
	f := newInFlight(4, 1000) // a budget of 4,000 bytes
	first, err := f.acquire(t.Context())
	if err != nil || !first.probe || first.weight != 4000 {
		t.Fatalf("first acquire = %+v, %v; want the probe, weighing the whole budget", first, err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	waited := make(chan error, 1)
	go func() {
		_, err := f.acquire(ctx)
		waited <- err
	}()
	cancel()
	if err := <-waited; !errors.Is(err, context.Canceled) {
		t.Fatalf("a waiter whose ctx ends: %v, want context.Canceled", err)
	}

	f.release(first, 0) // no message made: nothing learned
	again, err := f.acquire(t.Context())
	if err != nil || !again.probe || again.weight != 4000 {
		t.Fatalf("after a probe that made nothing: %+v, %v; want another probe", again, err)
	}
	next := make(chan slot, 1)
	go func() {
		s, err := f.acquire(t.Context())
		if err != nil {
			t.Error(err)
		}
		next <- s
	}()
	f.release(again, 300)
	if s := <-next; s.probe || s.weight != 300*footprintFactor {
		t.Fatalf("after a probe of 300 bytes: %+v, want a weight of %d", s, 300*footprintFactor)
	}
	f.release(slot{weight: 300 * footprintFactor}, 500)
	if s, _ := f.acquire(t.Context()); s.weight != 500*footprintFactor {
		t.Fatalf("after 500 bytes: weight %d, want the largest footprint, %d", s.weight, 500*footprintFactor)
	}
	big := newInFlight(1, 100)
	p, _ := big.acquire(t.Context())
	big.release(p, 1000) // larger than the budget
	if s, _ := big.acquire(t.Context()); s.weight != 100 {
		t.Fatalf("a footprint over the budget weighs %d, want the budget (100)", s.weight)
	}
}
