package postroomotel

// The transport's wrapper: a span and measurements per message handed
// over.

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"

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

// Transport returns next wrapped: each Send records the message's
// latency, size and outcome, added up in the call when it is part of a
// call run through Run or of an outbox job worked with RiverMiddleware,
// and makes a span (a child of the span in ctx) unless it is part of
// one of them, whose span stands for its messages (see
// Options.MessageSpanLimit). The wrapper keeps next's
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

// Send hands env to the wrapped transport and measures the hand-over:
// inside a span when ctx holds no call run through Run, or one whose
// messages get spans (Options.MessageSpanLimit), with its measurements
// recorded at once; otherwise without a span, added up in the call (see
// tallied). It returns the wrapped Send's error as it is.
func (w *tracedTransport) Send(ctx context.Context, env *postroom.Envelope) error {
	t := w.t
	tl := t.tallyOf(ctx)
	if tl != nil && !tl.spans {
		return w.tallied(ctx, env, tl)
	}
	ctx, span := t.tracer.Start(ctx, "send", t.sendStart...)
	start := t.clock()
	err := w.next.Send(ctx, env)
	elapsed := t.clock() - start
	o := classify(ctx, err)
	if span.IsRecording() {
		// One SetAttributes, when the span ends: each call on a span
		// that has attributes costs a pass over them, and attributes
		// given at the start cost a copy even when the span is not
		// sampled.
		b := t.attrBuf()
		set := append(b.kv[:0], t.system, attrOperationSend, attrTypeSend,
			attribute.String("messaging.message.id", env.SendID),
			attribute.Int("messaging.message.body.size", len(env.Data)),
			attribute.Int("postroom.envelope.recipients", len(env.To)),
			attribute.String("postroom.outcome", o.String()))
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
		t.putAttrBuf(b)
	}
	span.End()
	// The latency with the message's span: its exemplar links to it.
	t.duration.Record(ctx, elapsed.Seconds(), t.outcomes[o].record...)
	if tl != nil {
		tl.message(o, len(env.Data))
	} else {
		t.counts.message(o, len(env.Data))
	}
	return err
}

// tallied is Send without a span, for a call run through Run whose
// messages get none or an outbox job: the message's count and octets go
// to the tally, recorded when the call or job ends; its first message
// and one in 16 of the others are timed (see timed; every one with
// Options.TimeEveryMessage), so that a run of one call shows a latency. The
// latency goes without the call's span (no exemplar): a measurement
// offered to the exemplar reservoirs costs half as much again, and the
// exemplar would link to a span of many messages alike.
func (w *tracedTransport) tallied(ctx context.Context, env *postroom.Envelope, tl *tally) error {
	if !w.t.opts.TimeEveryMessage && !tl.takeFirst() && !timed(env.SendID) {
		err := w.next.Send(ctx, env)
		tl.message(classify(ctx, err), len(env.Data))
		return err
	}
	start := w.t.clock()
	err := w.next.Send(ctx, env)
	elapsed := w.t.clock() - start
	o := classify(ctx, err)
	w.t.duration.Record(context.Background(), elapsed.Seconds(), w.t.outcomes[o].record...)
	tl.message(o, len(env.Data))
	return err
}

// clock returns the monotonic time since New: a message is timed with
// two readings of the monotonic clock, where time.Now and time.Since
// make three (Now reads the wall clock too), and a reading costs as
// much as a small measurement on some virtual machines.
func (t *Telemetry) clock() time.Duration { return time.Since(t.epoch) }
