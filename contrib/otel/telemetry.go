package postroomotel

import (
	"errors"
	"fmt"
	"maps"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// scope is the instrumentation scope's name of the tracer and meter.
const scope = "github.com/postroom/postroom/contrib/otel"

// Options are the settings of New.
type Options struct {
	// TracerProvider makes the spans. Zero means otel.GetTracerProvider()
	// at New.
	TracerProvider trace.TracerProvider
	// MeterProvider makes the metrics. Zero means otel.GetMeterProvider()
	// at New.
	MeterProvider metric.MeterProvider
	// System is the messaging.system attribute of the transport's spans
	// and metrics. Zero means "smtp"; an application whose transport is
	// an HTTP API of a mail service names that service.
	System string
	// MessageSpanLimit is the most recipients a call run through Run may
	// have for each of its messages to get a span of its own; a larger
	// call gets its call span with the counts, and its messages are
	// measured by the metrics alone, added up in the call and recorded
	// when it ends, with one message in 16 timed for the latency
	// histogram: a span, or an SDK measurement, per message costs about
	// what the Mailer's own work for a message does (see
	// BenchmarkOverhead), and a trace of thousands of alike spans tells no
	// more than the counts.
	// Zero means 100; a negative value means no message spans under Run.
	// A Send outside Run (the outbox's worker) always gets its span.
	MessageSpanLimit int
}

// Telemetry makes postroom's spans and metrics with the providers of its
// Options. Make one with New; it is safe for concurrent use and never
// changes afterwards. The zero Telemetry is not usable.
type Telemetry struct {
	opts   Options
	tracer trace.Tracer

	duration   metric.Float64Histogram
	sent       metric.Int64Counter
	bytes      metric.Int64Counter
	recipients metric.Int64Counter
	events     metric.Int64Counter
	waiting    metric.Int64ObservableGauge
	oldest     metric.Float64ObservableGauge

	system attribute.KeyValue
	// outcomes holds the metric options of each outcome, made once and
	// passed as they are (a slice passed with ... is not copied).
	outcomes [numOutcomes]outcomeOptions
	// labels holds the options of postroom.recipients and
	// postroom.events by (status or event type, reason), made on first
	// use: an immutable map, replaced by a larger copy under mu when a
	// key is new, so that a lookup takes no lock and allocates nothing.
	labels atomic.Pointer[map[labelKey][]metric.AddOption]
	mu     sync.Mutex
}

// outcomeOptions are the metric options of one outcome.
type outcomeOptions struct {
	add    []metric.AddOption
	record []metric.RecordOption
}

// New returns a Telemetry with opts's providers, or an error when one of
// its instruments cannot be made.
func New(opts Options) (*Telemetry, error) {
	if opts.TracerProvider == nil {
		opts.TracerProvider = otel.GetTracerProvider()
	}
	if opts.MeterProvider == nil {
		opts.MeterProvider = otel.GetMeterProvider()
	}
	if opts.MessageSpanLimit == 0 {
		opts.MessageSpanLimit = 100
	}
	if opts.System == "" {
		opts.System = "smtp"
	}
	t := &Telemetry{opts: opts, tracer: opts.TracerProvider.Tracer(scope), system: attribute.String("messaging.system", opts.System)}
	meter := opts.MeterProvider.Meter(scope)
	var err, e error
	t.duration, e = meter.Float64Histogram("messaging.client.operation.duration", metric.WithUnit("s"),
		metric.WithDescription("Time the transport took to hand over one message."),
		metric.WithExplicitBucketBoundaries(0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10))
	err = errors.Join(err, e)
	t.sent, e = meter.Int64Counter("messaging.client.sent.messages", metric.WithUnit("{message}"),
		metric.WithDescription("Messages handed to the transport."))
	err = errors.Join(err, e)
	t.bytes, e = meter.Int64Counter("postroom.message.bytes", metric.WithUnit("By"),
		metric.WithDescription("Octets of the messages handed to the transport."))
	err = errors.Join(err, e)
	t.recipients, e = meter.Int64Counter("postroom.recipients", metric.WithUnit("{recipient}"),
		metric.WithDescription("Recipients of the calls run, by final status and reason code."))
	err = errors.Join(err, e)
	t.events, e = meter.Int64Counter("postroom.events", metric.WithUnit("{event}"),
		metric.WithDescription("Events of the sending path, by type and reason code."))
	err = errors.Join(err, e)
	t.waiting, e = meter.Int64ObservableGauge("postroom.outbox.waiting", metric.WithUnit("{recipient}"),
		metric.WithDescription("Recipients in the outbox without a final result whose job is still to run."))
	err = errors.Join(err, e)
	t.oldest, e = meter.Float64ObservableGauge("postroom.outbox.oldest_age", metric.WithUnit("s"),
		metric.WithDescription("Age of the oldest recipient waiting in the outbox (0 when none waits)."))
	err = errors.Join(err, e)
	if err != nil {
		return nil, fmt.Errorf("postroomotel: New: %w", err)
	}
	for o := range numOutcomes {
		attrs := []attribute.KeyValue{t.system, attrOperationSend, attribute.String("postroom.outcome", o.String())}
		if o.failed() {
			attrs = append(attrs, attribute.String("error.type", o.String()))
		}
		set := metric.WithAttributeSet(attribute.NewSet(attrs...))
		t.outcomes[o] = outcomeOptions{add: []metric.AddOption{set}, record: []metric.RecordOption{set}}
	}
	return t, nil
}

// labelKey names an attribute set of postroom.recipients or
// postroom.events.
type labelKey struct {
	metric string // "recipients" or "events"
	kind   string // the status or event type
	reason string
}

// label returns the options of key, made once.
func (t *Telemetry) label(key labelKey) []metric.AddOption {
	if m := t.labels.Load(); m != nil {
		if o, ok := (*m)[key]; ok {
			return o
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	old := t.labels.Load()
	if old != nil {
		if o, ok := (*old)[key]; ok {
			return o
		}
	}
	name := "postroom.status"
	if key.metric == "events" {
		name = "postroom.event"
	}
	o := []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(attribute.String(name, key.kind), attribute.String("postroom.reason", key.reason)))}
	m := make(map[labelKey][]metric.AddOption, 1)
	if old != nil {
		maps.Copy(m, *old)
	}
	m[key] = o
	t.labels.Store(&m)
	return o
}
