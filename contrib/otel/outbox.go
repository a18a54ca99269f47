package postroomotel

// The outbox's queue as observable gauges.

import (
	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/metric"

	"github.com/postroom/postroom/outbox"
)

// ObserveOutbox registers a callback that reads ob.Stats (one query) at
// each collection of the meter provider's readers and reports
// postroom.outbox.waiting and postroom.outbox.oldest_age. A failed read
// is returned to the reader, which reports it through otel's error
// handler, and the gauges have no point for that collection. Unregister
// the returned registration when ob is no longer used.
func (t *Telemetry) ObserveOutbox(ob *outbox.Outbox) (metric.Registration, error) {
	if ob == nil {
		return nil, fmt.Errorf("postroomotel: ObserveOutbox: nil outbox")
	}
	meter := t.opts.MeterProvider.Meter(scope)
	reg, err := meter.RegisterCallback(func(ctx context.Context, o metric.Observer) error {
		s, err := ob.Stats(ctx)
		if err != nil {
			return fmt.Errorf("postroomotel: outbox stats: %w", err)
		}
		age := 0.0
		if !s.Oldest.IsZero() {
			age = max(time.Since(s.Oldest).Seconds(), 0)
		}
		o.ObserveInt64(t.waiting, int64(s.Waiting))
		o.ObserveFloat64(t.oldest, age)
		return nil
	}, t.waiting, t.oldest)
	if err != nil {
		return nil, fmt.Errorf("postroomotel: ObserveOutbox: %w", err)
	}
	return reg, nil
}
