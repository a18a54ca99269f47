package postroomotel

// River's spans and metrics of the outbox's jobs, from River's own
// OpenTelemetry middleware, with the outbox's jobs made sessions of
// hand-overs as Run's calls are.

import (
	"context"

	"github.com/riverqueue/river/rivertype"
	"github.com/riverqueue/rivercontrib/otelriver"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/postroom/postroom/outbox"
)

// RiverMiddleware returns rivercontrib/otelriver's middleware with the
// Telemetry's providers: a span per job inserted and per job worked
// (river.insert_many, river.work/postroom_outbox_send), with River's
// metrics. Put it in the River client's config, for instance the one
// given to outbox.Outbox.NewClient.
//
// The work of an outbox job (outbox.SendArgs) is a session of
// hand-overs, as a call run through Run is: the messages it hands to a
// Transport wrapper get no span each; their counts, octets, events and
// latency are added up in the job and recorded when it ends, and River's
// span of the job gets postroom.messages.OUTCOME, the number of messages
// handed over with each outcome that some message had (see the package
// doc's Spans). Other jobs are River's alone.
func (t *Telemetry) RiverMiddleware() rivertype.Middleware {
	return &riverMiddleware{Middleware: otelriver.NewMiddleware(&otelriver.MiddlewareConfig{
		TracerProvider: t.opts.TracerProvider,
		MeterProvider:  t.opts.MeterProvider,
	}), t: t, kind: outbox.SendArgs{}.Kind()}
}

// riverMiddleware is otelriver's middleware (its insert middleware and
// hooks as they are) with the outbox's jobs' work tallied.
type riverMiddleware struct {
	*otelriver.Middleware
	t    *Telemetry
	kind string
}

// outcomeKeys are the job span's attributes of the messages' counts by
// outcome.
var outcomeKeys = func() (keys [numOutcomes]string) {
	for o := range numOutcomes {
		keys[o] = "postroom.messages." + o.String()
	}
	return keys
}()

// Work runs the job inside otelriver's Work; an outbox job's work runs
// with a tally as its context.
func (m *riverMiddleware) Work(ctx context.Context, job *rivertype.JobRow, doInner func(context.Context) error) error {
	if job == nil || job.Kind != m.kind {
		return m.Middleware.Work(ctx, job, doInner)
	}
	return m.Middleware.Work(ctx, job, func(ctx context.Context) error {
		tl := &tally{Context: ctx, t: m.t}
		err := doInner(tl)
		tl.flush()
		if span := trace.SpanFromContext(ctx); span.IsRecording() {
			var kv [numOutcomes]attribute.KeyValue
			set := kv[:0]
			for o := range numOutcomes {
				if n := tl.byOutcome[o].sent.Load(); n > 0 {
					set = append(set, attribute.Int64(outcomeKeys[o], n))
				}
			}
			span.SetAttributes(set...)
		}
		return err
	})
}
