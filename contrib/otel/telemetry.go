package postroomotel

import (
	"errors"
	"fmt"
	"sync"
	"time"

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
	// have for each of its messages to get a span of its own, a child of
	// the call's span. Zero means none: the call's span alone stands for
	// the call's hand-overs, with their counts (see the package doc's
	// Spans), because a sampled span costs several times what the
	// adapter's metrics do, about a fifth of the Mailer's own work for a
	// one-recipient call (see BenchmarkOverhead). A negative value means none
	// too. Outside Run and an outbox job worked with RiverMiddleware, a
	// Send of the Transport wrapper always gets its span.
	MessageSpanLimit int
	// TimeEveryMessage times every message of a call run through Run or
	// of an outbox job for messaging.client.operation.duration. Zero
	// means the first of each call or job and one in 16 of the others
	// (those whose send id ends in 0), so that the histogram's count is
	// about a sixteenth of those messages, which
	// messaging.client.sent.messages counts all: the SDK's record and
	// the clock's two readings cost about as much as all the rest of the
	// adapter's work for a one-recipient call whose span is not sampled.
	// A message with a span of its own is always timed.
	TimeEveryMessage bool
}

// Telemetry makes postroom's spans and metrics with the providers of its
// Options. Make one with New; it is safe for concurrent use and never
// changes afterwards. The zero Telemetry is not usable.
type Telemetry struct {
	opts   Options
	tracer trace.Tracer

	duration   metric.Float64Histogram
	sent       metric.Int64ObservableCounter
	bytes      metric.Int64ObservableCounter
	recipients metric.Int64ObservableCounter
	events     metric.Int64ObservableCounter
	waiting    metric.Int64ObservableGauge
	oldest     metric.Float64ObservableGauge

	system attribute.KeyValue
	// callStart and sendStart are the start options of a call's span
	// and of a message's, made once (options passed with ... are not
	// copied).
	callStart, sendStart []trace.SpanStartOption
	// outcomes holds the metric options of each outcome, made once and
	// passed as they are (a slice passed with ... is not copied).
	outcomes [numOutcomes]outcomeOptions
	// counts holds the counters' values (see counters.go).
	counts counts
	// bufs holds *attrBuf.
	bufs sync.Pool
	// epoch is when New ran, the origin of clock.
	epoch time.Time
}

// outcomeOptions are the metric options of one outcome.
type outcomeOptions struct {
	record  []metric.RecordOption
	observe []metric.ObserveOption
}

// New returns a Telemetry with opts's providers, or an error when one of
// its instruments cannot be made. It registers a callback with the
// meter provider that reports the counters at each collection (see the
// package doc's Metrics); it stays registered as long as the provider.
func New(opts Options) (*Telemetry, error) {
	if opts.TracerProvider == nil {
		opts.TracerProvider = otel.GetTracerProvider()
	}
	if opts.MeterProvider == nil {
		opts.MeterProvider = otel.GetMeterProvider()
	}
	if opts.System == "" {
		opts.System = "smtp"
	}
	t := &Telemetry{opts: opts, epoch: time.Now(), tracer: opts.TracerProvider.Tracer(scope), system: attribute.String("messaging.system", opts.System),
		callStart: []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindProducer)},
		sendStart: []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindProducer)}}
	meter := opts.MeterProvider.Meter(scope)
	var err, e error
	t.duration, e = meter.Float64Histogram("messaging.client.operation.duration", metric.WithUnit("s"),
		metric.WithDescription("Time the transport took to hand over one message."),
		metric.WithExplicitBucketBoundaries(0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10))
	err = errors.Join(err, e)
	t.sent, e = meter.Int64ObservableCounter("messaging.client.sent.messages", metric.WithUnit("{message}"),
		metric.WithDescription("Messages handed to the transport."))
	err = errors.Join(err, e)
	t.bytes, e = meter.Int64ObservableCounter("postroom.message.bytes", metric.WithUnit("By"),
		metric.WithDescription("Octets of the messages handed to the transport."))
	err = errors.Join(err, e)
	t.recipients, e = meter.Int64ObservableCounter("postroom.recipients", metric.WithUnit("{recipient}"),
		metric.WithDescription("Recipients of the calls run, by final status and reason code."))
	err = errors.Join(err, e)
	t.events, e = meter.Int64ObservableCounter("postroom.events", metric.WithUnit("{event}"),
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
		set := attribute.NewSet(attrs...)
		t.outcomes[o] = outcomeOptions{record: []metric.RecordOption{metric.WithAttributeSet(set)},
			observe: []metric.ObserveOption{metric.WithAttributeSet(set)}}
	}
	t.counts.init()
	if _, err := meter.RegisterCallback(t.observe, t.sent, t.bytes, t.recipients, t.events); err != nil {
		return nil, fmt.Errorf("postroomotel: New: %w", err)
	}
	return t, nil
}
