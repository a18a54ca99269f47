package inbound

import (
	"context"
	"time"

	"github.com/postroom/postroom/bounce"
	"github.com/postroom/postroom/events"
)

// The wait for a send not recorded yet (Options.SendWait): a local relay
// returns a bounce within milliseconds of the hand-over, while the
// send's record is written by an events.Recorder within its FlushAfter
// (and the application's periodic Flush). Rather than answer 451 and
// take the report at the sender's retry (5 minutes or more with
// Postfix's defaults, the dead address still sent to meanwhile), the
// Receiver looks the send up again for a few seconds. The send path pays
// nothing for it; see docs/BOUNCES.md for the other designs weighed.

// Polling intervals of the wait: the first lookup again after firstPoll,
// each next one after twice the last, at most maxPoll, the last one at
// the deadline.
const (
	firstPoll = 20 * time.Millisecond
	maxPoll   = 250 * time.Millisecond
)

// message is one message read, as proven for each of its envelope
// recipients: its report, and the deadline of the waits for their sends,
// one for the message (set by the first wait, shared by the next ones),
// so that a message to several unknown send ids waits SendWait in all,
// not SendWait for each. Its recipients are proven one after the other,
// never at once.
type message struct {
	rep       *bounce.Report
	waitUntil time.Time // zero until a recipient's send is first awaited
}

// awaitSend looks up id again, with backoff, until Sends knows it, the
// message's wait deadline has passed, or ctx is done; it is called after
// a lookup found no send for id. It returns the send and true once
// found; false with a nil error when the wait is over without it (or
// not waited: SendWait off, MaxSendWaits messages waiting already, or id
// already seen unknown, whose retry comes minutes later); a *StoreError
// when a lookup failed or ctx ended the wait, so that the message is
// offered again later.
func (rc *Receiver) awaitSend(ctx context.Context, m *message, id string) (events.Send, bool, error) {
	if rc.waits == nil || rc.unknown != nil && rc.unknown.seen(id) {
		return events.Send{}, false, nil
	}
	now := time.Now()
	if m.waitUntil.IsZero() {
		m.waitUntil = now.Add(rc.opts.SendWait)
	}
	if !now.Before(m.waitUntil) {
		return events.Send{}, false, nil
	}
	select {
	case rc.waits <- struct{}{}:
		defer func() { <-rc.waits }()
	default:
		rc.opts.Logger.Warn("inbound: too many reports waiting for their sends; this one is not waited for", "send_id", id, "max_send_waits", cap(rc.waits))
		return events.Send{}, false, nil
	}
	delay := firstPoll
	timer := time.NewTimer(min(delay, m.waitUntil.Sub(now)))
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return events.Send{}, false, &StoreError{Op: "wait for send " + id, Err: context.Cause(ctx)}
		case <-timer.C:
		}
		snd, ok, err := rc.opts.Sends.Lookup(ctx, id)
		if err != nil {
			return events.Send{}, false, &StoreError{Op: "look up send " + id, Err: err}
		}
		if ok {
			rc.opts.Logger.Debug("inbound: send recorded while its report waited", "send_id", id, "waited", time.Since(now))
			return snd, true, nil
		}
		left := time.Until(m.waitUntil)
		if left <= 0 {
			return events.Send{}, false, nil
		}
		delay = min(2*delay, maxPoll)
		timer.Reset(min(delay, left))
	}
}
