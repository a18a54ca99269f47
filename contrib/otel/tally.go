package postroomotel

// A large call's measurements, kept in the call and recorded once when
// it ends.

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/postroom/postroom"
)

// timed reports whether a message of a large call is timed: one in 16,
// those whose send id (random hex) ends in 0, chosen without a shared
// counter. The OpenTelemetry SDK's histogram record costs a good part of
// what the Mailer's own work for a small message does; one in 16 keeps
// the distribution and costs a sixteenth.
func timed(sendID string) bool { return sendID == "" || sendID[len(sendID)-1] == '0' }

// tally holds the measurements of a call run through Run with more than
// Options.MessageSpanLimit recipients: its messages' counts and octets
// by outcome and its events by type and reason, added up by the call's
// workers and recorded by Run once the call has returned (no worker runs
// then), so that a message costs a few atomic adds instead of an SDK
// measurement each. It is in the call's context under tallyKey.
type tally struct {
	t *Telemetry
	// byOutcome holds each outcome's messages and octets side by side:
	// a message's two adds touch one cache line.
	byOutcome [numOutcomes]struct{ sent, bytes atomic.Int64 }

	// sends counts the events of the common kind, send without a
	// reason, without the lock.
	sends  atomic.Int64
	mu     sync.Mutex
	events []eventCount
}

// tallyKey is the context key of a call's tally.
type tallyKey struct{}

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
	tl.events = append(tl.events, eventCount{typ, reason, 1})
}

// flush records the tally's counts; ctx carries the call's span (the
// exemplars' link).
func (tl *tally) flush(ctx context.Context) {
	t := tl.t
	for o := range numOutcomes {
		if n := tl.byOutcome[o].sent.Load(); n > 0 {
			t.sent.Add(ctx, n, t.outcomes[o].add...)
			t.bytes.Add(ctx, tl.byOutcome[o].bytes.Load(), t.outcomes[o].add...)
		}
	}
	if n := tl.sends.Load(); n > 0 {
		t.events.Add(ctx, n, t.label(labelKey{"events", string(postroom.EventSend), ""})...)
	}
	for _, e := range tl.events {
		t.events.Add(ctx, e.n, t.label(labelKey{"events", string(e.typ), e.reason})...)
	}
}
