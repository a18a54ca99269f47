package postroomotel

// The counters' values, kept by the Telemetry in atomic integers and
// reported to the SDK by a callback at each collection.
//
// A synchronous counter's Add costs the SDK's attribute lookup and
// aggregation on the caller's goroutine, a few hundred nanoseconds each:
// for a one-recipient call, its four counts cost more than all the rest
// of the adapter's metrics. The counts are sums, known exactly in the
// process, so the counters are observable ones (what OpenTelemetry's
// API has them for: a value kept elsewhere, read when collected), and a
// count costs an atomic add.

import (
	"context"
	"maps"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/postroom/postroom"
)

// counts holds the values of messaging.client.sent.messages,
// postroom.message.bytes, postroom.recipients and postroom.events since
// New.
type counts struct {
	// byOutcome holds each outcome's messages and octets side by side.
	byOutcome [numOutcomes]struct{ sent, bytes atomic.Int64 }

	// labels holds the counts of postroom.recipients and
	// postroom.events by (status or event type, reason), made on first
	// use: an immutable map, replaced by a larger copy under mu when a
	// key is new, so that a lookup takes no lock and allocates nothing.
	// It holds at most maxLabels keys; the counts of the keys past them
	// go to overflow.
	labels atomic.Pointer[map[labelKey]*labelCount]
	mu     sync.Mutex
	// overflow holds the counts of the keys past maxLabels, of
	// postroom.recipients and of postroom.events.
	overflow [2]labelCount
	// sendEvents and sentRecipients are the counts of the common labels,
	// send events and sent recipients without a reason: no lookup.
	sendEvents, sentRecipients *labelCount
}

// maxLabels bounds the labels of postroom.recipients and
// postroom.events. The statuses, event types and reason codes of
// postroom make a few dozen; an OnEvent of an application's own may pass
// reasons of its own, and past the bound they are counted under the
// attribute otel.metric.overflow=true, as the SDK does past an
// instrument's cardinality limit.
const maxLabels = 256

// labelKey names a count of postroom.recipients or postroom.events.
type labelKey struct {
	events bool   // postroom.events, not postroom.recipients
	kind   string // the status or event type
	reason string
}

// labelCount is the count of one labelKey and its attribute set.
type labelCount struct {
	n       atomic.Int64
	events  bool
	observe []metric.ObserveOption
}

// init makes the overflow counts and the common labels.
func (c *counts) init() {
	over := []metric.ObserveOption{metric.WithAttributeSet(attribute.NewSet(attribute.Bool("otel.metric.overflow", true)))}
	c.overflow[0].observe = over
	c.overflow[1] = labelCount{events: true, observe: over}
	c.sendEvents = c.label(labelKey{true, string(postroom.EventSend), ""})
	c.sentRecipients = c.label(labelKey{false, string(postroom.StatusSent), ""})
}

// label returns the count of key, made once.
func (c *counts) label(key labelKey) *labelCount {
	if m := c.labels.Load(); m != nil {
		if l, ok := (*m)[key]; ok {
			return l
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.labels.Load()
	if old != nil {
		if l, ok := (*old)[key]; ok {
			return l
		}
		if len(*old) >= maxLabels {
			if key.events {
				return &c.overflow[1]
			}
			return &c.overflow[0]
		}
	}
	name := "postroom.status"
	if key.events {
		name = "postroom.event"
	}
	l := &labelCount{events: key.events, observe: []metric.ObserveOption{metric.WithAttributeSet(
		attribute.NewSet(attribute.String(name, key.kind), attribute.String("postroom.reason", key.reason)))}}
	m := make(map[labelKey]*labelCount, 1)
	if old != nil {
		maps.Copy(m, *old)
	}
	m[key] = l
	c.labels.Store(&m)
	return l
}

// recipient returns the count of recipients of status st and reason
// code.
func (c *counts) recipient(st postroom.Status, code postroom.ReasonCode) *labelCount {
	if st == postroom.StatusSent && code == "" {
		return c.sentRecipients
	}
	return c.label(labelKey{false, string(st), string(code)})
}

// event returns the count of events of type typ and reason.
func (c *counts) event(typ postroom.EventType, reason string) *labelCount {
	if typ == postroom.EventSend && reason == "" {
		return c.sendEvents
	}
	return c.label(labelKey{true, string(typ), reason})
}

// message counts a message of size octets handed over with outcome o.
func (c *counts) message(o outcome, size int) {
	b := &c.byOutcome[o]
	b.sent.Add(1)
	b.bytes.Add(int64(size))
}

// observe is the callback New registers: it reports each count made so
// far (a cumulative sum; the SDK makes deltas of them for a reader that
// wants deltas).
func (t *Telemetry) observe(_ context.Context, o metric.Observer) error {
	c := &t.counts
	for i := range numOutcomes {
		if n := c.byOutcome[i].sent.Load(); n > 0 {
			o.ObserveInt64(t.sent, n, t.outcomes[i].observe...)
			o.ObserveInt64(t.bytes, c.byOutcome[i].bytes.Load(), t.outcomes[i].observe...)
		}
	}
	report := func(l *labelCount) {
		if n := l.n.Load(); n > 0 {
			inst := t.recipients
			if l.events {
				inst = t.events
			}
			o.ObserveInt64(inst, n, l.observe...)
		}
	}
	if m := c.labels.Load(); m != nil {
		for _, l := range *m {
			report(l)
		}
	}
	report(&c.overflow[0])
	report(&c.overflow[1])
	return nil
}
