package postroom

// Events as the sending path sees them: each recipient's final Result
// that is an event goes to Options.OnEvent. Bounces and complaints that
// come back later are events of the receiving side (same type).

import (
	"context"
	"errors"
	"time"
)

// EventType is what happened in an Event. Its values are the constants
// below, Mandrill's event names; the zero EventType is no event.
type EventType string

// Event types.
const (
	// EventSend: the message was handed over (the Result is sent or
	// queued).
	EventSend EventType = "send"
	// EventDeferral: the message was not delivered and may be retried
	// (the Result is deferred, with any reason: soft-bounce,
	// connection-failed, timeout, ...).
	EventDeferral EventType = "deferral"
	// EventHardBounce: the address itself is dead: no such user, no such
	// domain, mailbox disabled. Suppress it.
	EventHardBounce EventType = "hard_bounce"
	// EventSoftBounce: delivery failed for good for this message but the
	// address may be fine (a full mailbox, content judged spam, a policy,
	// a blocked IP): a list suppresses it only after several.
	EventSoftBounce EventType = "soft_bounce"
	// EventSpam: the recipient complained (an ARF feedback report).
	EventSpam EventType = "spam"
	// EventUnsub: the recipient unsubscribed.
	EventUnsub EventType = "unsub"
	// EventReject: the message was not sent because Options.Suppressions
	// lists the address.
	EventReject EventType = "reject"
)

// Event is one thing that happened to one recipient's message: given to
// Options.OnEvent as the sending path decides it, and made by the
// receiving side for bounces, complaints and unsubscribes that come back
// later. Its JSON form uses Mandrill's event names.
type Event struct {
	// Type is what happened.
	Type EventType `json:"event"`
	// SendID is the send id of the message; empty when no message was
	// made (EventReject).
	SendID string `json:"send_id,omitempty"`
	// AccountID is the call's account.
	AccountID string `json:"account_id"`
	// Email is the recipient's address as it was sent to (the domain
	// lower-cased).
	Email string `json:"email"`
	// Reason is the Result's reason code for events of the sending path
	// (for EventReject the entry's: hard-bounce, spam, ...; for a bounce
	// at SMTP time hard-bounce, whichever of the two bounce types it is),
	// or the bounce class for a bounce that came back later. Empty for
	// EventSend without a reason.
	Reason string `json:"reason,omitempty"`
	// Status is the RFC 3463 enhanced status code ("5.1.1"), when known.
	Status string `json:"status,omitempty"`
	// Diagnostic is the next hop's reply ("550 5.1.1 user unknown"), or
	// the detail of the Result's reason when there was no reply; empty
	// when there is neither.
	Diagnostic string `json:"diagnostic,omitempty"`
	// List is the list id of the message (its List-Id, lower-cased; see
	// ListID), or "" for a transactional message. For an event of the
	// receiving side it is the list of the message that came back.
	List string `json:"list,omitempty"`
	// At is when it happened (Options.Now).
	At time.Time `json:"ts"`
}

// emit passes recipient i's final Result r to Options.OnEvent when it is
// an event (see eventType).
func (j *job) emit(ctx context.Context, i int, r Result) {
	t := eventType(r)
	if t == "" {
		return
	}
	e := Event{Type: t, SendID: r.SendID, AccountID: j.call.AccountID, Email: j.address(i), Reason: string(r.Code), List: j.list, At: j.m.opts.Now()}
	var de *DeliveryError
	if t != EventSend && errors.As(r.Err, &de) {
		// The recipient's own reply (a sent recipient's error is its bcc
		// copies').
		e.Status, e.Diagnostic = de.Enhanced, deliveryReply(de)
	}
	if e.Diagnostic == "" && len(r.Reason) > len(r.Code)+2 {
		e.Diagnostic = r.Reason[len(r.Code)+2:] // the detail after "code: "
	}
	j.m.opts.OnEvent(ctx, e)
}

// eventType is the type of the event a final Result r is, or "" when it
// is none (invalid: no message was made; unknown: the outcome is not
// known).
//
// A recipient the next hop refused for good at SMTP time (rejected,
// hard-bounce) is a bounce: hard when the reply's enhanced status code
// says the address is dead (RFC 3463 X.1.1 bad mailbox, X.1.2 bad domain,
// X.1.3 bad address syntax, X.1.6 moved, X.1.10 null MX, X.2.1 mailbox
// disabled), soft for any other refusal (a full mailbox, spam, policy,
// size, a blocked IP), and soft when the reply has no enhanced status
// code: calling a live address dead silences it, so that takes evidence.
func eventType(r Result) EventType {
	switch r.Status {
	case StatusSent, StatusQueued:
		return EventSend
	case StatusDeferred:
		return EventDeferral
	case StatusRejected:
		if _, ok := r.Err.(*SuppressedError); ok {
			return EventReject
		}
		var de *DeliveryError
		if errors.As(r.Err, &de) && deadAddress(de.Enhanced) {
			return EventHardBounce
		}
		return EventSoftBounce
	}
	return ""
}

// deadAddress reports whether the enhanced status code of a permanent
// failure says that the address itself does not exist or no longer takes
// mail.
func deadAddress(status string) bool {
	switch status {
	case "5.1.1", "5.1.2", "5.1.3", "5.1.6", "5.1.10", "5.2.1":
		return true
	}
	return false
}
