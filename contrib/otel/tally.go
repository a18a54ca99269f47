package postroomotel

// A call's measurements, kept in the call and recorded once when it
// ends.

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/postroom/postroom"
)

// timed reports whether a message of a call or job is timed, unless
// Options.TimeEveryMessage or it is the call's first (see
// tally.takeFirst): one in 16, those whose send id (random hex) ends in
// 0, chosen without a shared counter. The OpenTelemetry SDK's
// histogram record and the two clock readings cost a good part of the
// adapter's whole cost for a one-recipient call (see BenchmarkOverhead);
// one in 16 keeps the distribution and costs a sixteenth.
func timed(sendID string) bool { return sendID == "" || sendID[len(sendID)-1] == '0' }

// tally is the state of a call run through Run, and the context the
// Mailer runs the call with: one allocation for both. It holds the
// call's counts, its messages' and octets by outcome and its events by
// type and reason, added up by the call's workers and added to the
// Telemetry's by Run once the Mailer has returned (no worker runs then):
// a call's workers share no cache line with other calls' while it runs.
// Its Value answers tallyKey with itself.
type tally struct {
	// Context is the call's context, with the call's span.
	context.Context
	t *Telemetry
	// spans is whether each message gets a span (MessageSpanLimit).
	spans bool
	// first is set by the call's first message handed over, which is
	// always timed: a run of one call shows a latency.
	first atomic.Bool

	// byOutcome holds each outcome's messages and octets side by side:
	// a message's two adds touch one cache line.
	byOutcome [numOutcomes]struct{ sent, bytes atomic.Int64 }

	// sends counts the events of the common kind, send without a
	// reason, without the lock.
	sends  atomic.Int64
	mu     sync.Mutex
	events []eventCount
	// buf holds the first events' counts: no allocation for a call
	// whose events are of few kinds.
	buf [2]eventCount
}

// tallyKey is the context key of a call's tally.
type tallyKey struct{}

// Value returns the tally for tallyKey, and the call context's value
// otherwise.
func (tl *tally) Value(key any) any {
	if _, ok := key.(tallyKey); ok {
		return tl
	}
	return tl.Context.Value(key)
}

// eventCount is the number of events of one type and reason.
type eventCount struct {
	typ    postroom.EventType
	reason string
	n      int64
}

// tallyOf returns the tally of t's in ctx, or nil.
func (t *Telemetry) tallyOf(ctx context.Context) *tally {
	if tl, ok := ctx.Value(tallyKey{}).(*tally); ok && tl.t == t {
		return tl
	}
	return nil
}

// event counts an event of type typ and reason.
func (tl *tally) event(typ postroom.EventType, reason string) {
	if typ == postroom.EventSend && reason == "" {
		tl.sends.Add(1)
		return
	}
	tl.mu.Lock()
	defer tl.mu.Unlock()
	for i := range tl.events {
		if e := &tl.events[i]; e.typ == typ && e.reason == reason {
			e.n++
			return
		}
	}
	if tl.events == nil {
		tl.events = tl.buf[:0]
	}
	tl.events = append(tl.events, eventCount{typ, reason, 1})
}

// takeFirst reports whether the message handing over now is the call's
// or job's first, once: the first of concurrent ones wins.
func (tl *tally) takeFirst() bool {
	return !tl.first.Load() && tl.first.CompareAndSwap(false, true)
}

// message counts a message handed over with outcome o.
func (tl *tally) message(o outcome, size int) {
	c := &tl.byOutcome[o]
	c.sent.Add(1)
	c.bytes.Add(int64(size))
}

// flush adds the tally's counts to the Telemetry's.
func (tl *tally) flush() {
	c := &tl.t.counts
	for o := range numOutcomes {
		if n := tl.byOutcome[o].sent.Load(); n > 0 {
			c.byOutcome[o].sent.Add(n)
			c.byOutcome[o].bytes.Add(tl.byOutcome[o].bytes.Load())
		}
	}
	if n := tl.sends.Load(); n > 0 {
		c.sendEvents.n.Add(n)
	}
	for _, e := range tl.events {
		c.event(e.typ, e.reason).n.Add(e.n)
	}
}
