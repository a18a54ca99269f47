package postroom

import (
	"context"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/semaphore"
)

// inFlight bounds the bytes a call's workers hold at once to
// Concurrency x MaxMessageBytes. A recipient in flight holds its worker's
// buffers (render, generated text, message with room for its signatures:
// worker.footprint), and the garbage collector lets the heap grow to about
// twice what is live before it collects: a recipient weighs
// footprintFactor times the largest footprint the call has seen so far.
// Until a message has been made, nothing tells that footprint: one
// recipient, the probe, takes the whole budget and is in flight alone, and the
// other workers wait for it to end, then take the footprint it gives (or,
// when it made no message, one of them becomes the next probe). Small
// messages are thus never held back, and fewer large ones are in flight
// at a time.
// A worker drops buffers larger than keptBufferBytes after each recipient
// (deliverIn), so that idle workers hold none beyond the bound.
type inFlight struct {
	sem    *semaphore.Weighted
	budget int64

	seen atomic.Int64 // the largest footprint so far, 0 before the first

	mu      sync.Mutex    // for a probe, until seen is known
	probing bool          // a probe is in flight
	probed  chan struct{} // closed when the probe in flight ends
}

// footprintFactor is the heap a footprint takes, garbage included.
const footprintFactor = 2

func newInFlight(concurrency, maxMessageBytes int) *inFlight {
	b := int64(concurrency) * int64(maxMessageBytes)
	return &inFlight{sem: semaphore.NewWeighted(b), budget: b, probed: make(chan struct{})}
}

// slot is what acquire gives a recipient, for release.
type slot struct {
	weight int64
	probe  bool
}

// acquire waits for one recipient's weight and returns it, for release;
// the error is ctx's.
func (f *inFlight) acquire(ctx context.Context) (slot, error) {
	for {
		if seen := f.seen.Load(); seen > 0 {
			s := slot{weight: min(seen, f.budget)}
			return s, f.sem.Acquire(ctx, s.weight)
		}
		f.mu.Lock()
		if f.seen.Load() > 0 {
			f.mu.Unlock()
			continue
		}
		if !f.probing {
			f.probing = true
			f.mu.Unlock()
			s := slot{weight: f.budget, probe: true}
			if err := f.sem.Acquire(ctx, s.weight); err != nil {
				f.endProbe()
				return slot{}, err
			}
			return s, nil
		}
		probed := f.probed
		f.mu.Unlock()
		select {
		case <-probed:
		case <-ctx.Done():
			return slot{}, ctx.Err()
		}
	}
}

// release gives back s, learning the footprint of its recipient: held,
// the bytes its worker's buffers held for the message it made (0: none
// was made).
func (f *inFlight) release(s slot, held int) {
	if held > 0 {
		fp := int64(held) * footprintFactor
		for {
			old := f.seen.Load()
			if fp <= old || f.seen.CompareAndSwap(old, fp) {
				break
			}
		}
	}
	f.sem.Release(s.weight)
	if s.probe {
		f.endProbe()
	}
}

// endProbe wakes the workers waiting for the probe in flight.
func (f *inFlight) endProbe() {
	f.mu.Lock()
	f.probing = false
	close(f.probed)
	f.probed = make(chan struct{})
	f.mu.Unlock()
}
