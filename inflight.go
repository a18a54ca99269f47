package postroom

import (
	"context"
	"sync/atomic"

	"golang.org/x/sync/semaphore"
)

// inFlight bounds the bytes a call's workers hold at once to
// Concurrency x MaxMessageBytes. A recipient in flight holds its render
// buffers and its message (signed, a second copy): about footprintFactor
// times its message. Before a recipient, a worker takes the largest
// footprint the call has seen so far; the first recipient, whose size
// nothing tells yet, takes the whole budget and so runs alone. Small
// messages are thus never held back, and large ones run fewer at a time.
type inFlight struct {
	sem    *semaphore.Weighted
	budget int64
	seen   atomic.Int64 // the largest footprint so far, 0 before the first
}

const footprintFactor = 3

func newInFlight(concurrency, maxMessageBytes int) *inFlight {
	b := int64(concurrency) * int64(maxMessageBytes)
	return &inFlight{sem: semaphore.NewWeighted(b), budget: b}
}

// acquire waits for the weight of one recipient and returns it, for
// release; the error is ctx's.
func (f *inFlight) acquire(ctx context.Context) (int64, error) {
	w := f.seen.Load()
	if w == 0 || w > f.budget {
		w = f.budget
	}
	return w, f.sem.Acquire(ctx, w)
}

// release gives back weight w, learning the footprint of the message of
// messageBytes just made.
func (f *inFlight) release(w int64, messageBytes int) {
	fp := max(int64(messageBytes)*footprintFactor, 1)
	for {
		old := f.seen.Load()
		if fp <= old || f.seen.CompareAndSwap(old, fp) {
			break
		}
	}
	f.sem.Release(w)
}
