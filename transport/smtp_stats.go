package transport

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/postroom/postroom/delivery"
)

// SMTPStats are an SMTP transport's counters since NewSMTP. Each field is
// read atomically on its own, so a snapshot taken while Sends run may be
// a few events apart between fields; every counter only grows.
//
// The outcome counters count Sends, one each, by what Send returned (see
// SMTP): Sent (nil), Partial (a *delivery.PartialError), Permanent,
// Uncertain and Temporary (a DeliveryError of that kind), Unusable (an
// error wrapping delivery.ErrTransportUnusable, ErrCoolingDown and
// ErrClosed included) and Canceled (the Send's ctx ended before an
// outcome was known; an uncertain end of data counts as Uncertain).
//
// They are cheap to keep (a few atomic adds per message) and to read; an
// exporter (Prometheus, OpenTelemetry) can poll Stats and publish the
// fields as counters: the transport package imports none.
type SMTPStats struct {
	Sent, Partial, Permanent, Uncertain, Temporary, Unusable, Canceled int64

	// Retries is the number of attempts after a message's first (see
	// RetryPolicy).
	Retries int64
	// Dials is the number of TCP connections opened, and DialFailures the
	// number of dials or session setups (greeting, EHLO, STARTTLS, AUTH)
	// that failed.
	Dials, DialFailures int64
	// Redials is the number of pooled connections found dead (by NOOP, or
	// before any reply of a transaction) and replaced without counting an
	// attempt.
	Redials int64
	// BytesWritten is the number of bytes written to the server: commands
	// and message text, counted before TLS.
	BytesWritten int64
	// ConnWait is the total time Sends waited for a connection: for an
	// idle one or a free slot under MaxConns (and for the probe of a
	// session setup), not the dial itself.
	ConnWait time.Duration
}

// smtpStats are SMTPStats as they are kept.
type smtpStats struct {
	sent, partial, permanent, uncertain, temporary, unusable, canceled atomic.Int64
	retries, dials, dialFailures, redials, written, waitNs             atomic.Int64
}

// Stats returns t's counters. It is safe to call at any time, also
// after Close.
func (t *SMTP) Stats() SMTPStats {
	s := &t.stats
	return SMTPStats{
		Sent: s.sent.Load(), Partial: s.partial.Load(), Permanent: s.permanent.Load(),
		Uncertain: s.uncertain.Load(), Temporary: s.temporary.Load(), Unusable: s.unusable.Load(),
		Canceled: s.canceled.Load(),
		Retries:  s.retries.Load(), Dials: s.dials.Load(), DialFailures: s.dialFailures.Load(),
		Redials: s.redials.Load(), BytesWritten: s.written.Load(), ConnWait: time.Duration(s.waitNs.Load()),
	}
}

// finish counts and logs the outcome of a Send of env that started at
// start and returns *errp.
func (t *SMTP) finish(ctx context.Context, env *delivery.Envelope, start time.Time, errp *error) {
	err := *errp
	var outcome string
	var de *delivery.DeliveryError
	var pe *delivery.PartialError
	switch {
	case err == nil:
		t.stats.sent.Add(1)
		outcome = "sent"
	case errors.Is(err, delivery.ErrTransportUnusable):
		t.stats.unusable.Add(1)
		outcome = "unusable"
	case errors.As(err, &pe):
		t.stats.partial.Add(1)
		outcome = "partial"
	case errors.As(err, &de) && de.Kind == delivery.DeliveryUncertain:
		t.stats.uncertain.Add(1)
		outcome = "uncertain"
	case de != nil && de.Kind == delivery.DeliveryPermanent:
		t.stats.permanent.Add(1)
		outcome = "permanent"
	case ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)):
		t.stats.canceled.Add(1)
		outcome = "canceled"
	default:
		t.stats.temporary.Add(1)
		outcome = "temporary"
	}
	t.log.sent(ctx, env, outcome, err, time.Since(start))
}

// waited counts a wait of p.get for a connection, and logs it if long.
func (p *pool) waited(ctx context.Context, d time.Duration) {
	p.stats.waitNs.Add(int64(d))
	p.log.poolWait(ctx, d)
}
