package postroomotel

// The transport's wrapper: a span and measurements per message handed
// over.

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/postroom/postroom"
)

// outcome is how a hand-over ended: the postroom.outcome attribute.
type outcome uint8

const (
	outcomeSent outcome = iota
	outcomePartial
	outcomePermanent
	outcomeUncertain
	outcomeTemporary
	outcomeUnusable
	outcomeCanceled
	numOutcomes
)

// String is the attribute's value.
func (o outcome) String() string {
	return [...]string{"sent", "partial", "permanent", "uncertain", "temporary", "unusable", "canceled"}[o]
}

// failed reports whether o is a failed hand-over (error.type is set and
// the span's status is Error). A partial one delivered the message to its
// recipient; only bcc copies were refused.
func (o outcome) failed() bool { return o != outcomeSent && o != outcomePartial }

// classify returns the outcome of a Send that returned err with ctx, as
// the Transport contract defines the errors.
func classify(ctx context.Context, err error) outcome {
	if err == nil {
		return outcomeSent
	}
	var pe *postroom.PartialError
	if errors.As(err, &pe) {
		return outcomePartial
	}
	if errors.Is(err, postroom.ErrTransportUnusable) {
		return outcomeUnusable
	}
	if ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		return outcomeCanceled
	}
	var de *postroom.DeliveryError
	if errors.As(err, &de) {
		switch de.Kind {
		case postroom.DeliveryPermanent:
			return outcomePermanent
		case postroom.DeliveryUncertain:
			return outcomeUncertain
		}
	}
	return outcomeTemporary
}

var (
	attrOperationSend = attribute.String("messaging.operation.name", "send")
	attrTypeSend      = attribute.String("messaging.operation.type", "send")
)

// Transport returns next wrapped: each Send makes a span (a child of the
// span in ctx, the call's when the call runs through Run) and records
// the message's latency, size and outcome. The wrapper keeps next's
// optional capabilities: when next is a postroom.Queuer, so is the
// wrapper, with next's answer, so that the Mailer still reports
// StatusQueued. Unwrap returns next.
func (t *Telemetry) Transport(next postroom.Transport) postroom.Transport {
	w := &tracedTransport{next: next, t: t}
	if q, ok := next.(postroom.Queuer); ok {
		return &queuingTransport{tracedTransport: w, q: q}
	}
	return w
}

// tracedTransport is Transport's wrapper of a transport that has no
// optional capability.
type tracedTransport struct {
	next postroom.Transport
	t    *Telemetry
}

// queuingTransport is Transport's wrapper of a postroom.Queuer.
type queuingTransport struct {
	*tracedTransport
	q postroom.Queuer
}

// Queued returns the wrapped transport's Queued.
func (w *queuingTransport) Queued() bool { return w.q.Queued() }

// Unwrap returns the wrapped transport.
func (w *tracedTransport) Unwrap() postroom.Transport { return w.next }

// Send hands env to the wrapped transport inside a span, and records
// the hand-over's measurements. It returns the wrapped Send's error as
// it is.
func (w *tracedTransport) Send(ctx context.Context, env *postroom.Envelope) error {
	t := w.t
	if tl := t.tallyOf(ctx); tl != nil {
		return w.tallied(ctx, env, tl)
	}
	ctx, span := t.tracer.Start(ctx, "send", trace.WithSpanKind(trace.SpanKindProducer),
		trace.WithAttributes(t.system, attrOperationSend, attrTypeSend,
			attribute.String("messaging.message.id", env.SendID),
			attribute.Int("messaging.message.body.size", len(env.Data)),
			attribute.Int("postroom.envelope.recipients", len(env.To))))
	start := time.Now()
	err := w.next.Send(ctx, env)
	elapsed := time.Since(start)
	o := classify(ctx, err)
	if span.IsRecording() {
		// One SetAttributes: each call on a span that has attributes
		// costs a pass over them.
		var buf [4]attribute.KeyValue
		set := append(buf[:0], attribute.String("postroom.outcome", o.String()))
		if o.failed() {
			set = append(set, attribute.String("error.type", o.String()))
			var de *postroom.DeliveryError
			if errors.As(err, &de) {
				if de.Code != 0 {
					set = append(set, attribute.Int("postroom.smtp.code", de.Code))
				}
				if de.Enhanced != "" {
					set = append(set, attribute.String("postroom.smtp.enhanced", de.Enhanced))
				}
			}
			// The outcome, not the error's text: a reply may quote the
			// address.
			span.SetStatus(codes.Error, o.String())
		}
		span.SetAttributes(set...)
	}
	span.End()
	t.record(ctx, o, elapsed, len(env.Data))
	return err
}

// tallied is Send without a span, for a large call: the message's
// count and octets go to the call's tally, and one message in 16 is
// timed (see timed). The latency goes without the call's span (no
// exemplar): offering each measurement to the exemplar reservoirs costs
// more than the measurement, for a span of many messages alike.
func (w *tracedTransport) tallied(ctx context.Context, env *postroom.Envelope, tl *tally) error {
	var err error
	if timed(env.SendID) {
		start := time.Now()
		err = w.next.Send(ctx, env)
		w.t.duration.Record(context.Background(), time.Since(start).Seconds(), w.t.outcomes[classify(ctx, err)].record...)
	} else {
		err = w.next.Send(ctx, env)
	}
	o := classify(ctx, err)
	c := &tl.byOutcome[o]
	c.sent.Add(1)
	c.bytes.Add(int64(len(env.Data)))
	return err
}

// record records a hand-over's measurements.
func (t *Telemetry) record(ctx context.Context, o outcome, elapsed time.Duration, size int) {
	opts := &t.outcomes[o]
	t.duration.Record(ctx, elapsed.Seconds(), opts.record...)
	t.sent.Add(ctx, 1, opts.add...)
	t.bytes.Add(ctx, int64(size), opts.add...)
}
