package postroom

// Events as the sending path sees them: each recipient's final Result
// that is an event goes to Options.OnEvent. Bounces and complaints that
// come back later are events of the receiving side (same type).

import (
	"context"
	"crypto/aes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"math"
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
	// EventQueued: the recipient's message was stored to be sent later
	// (package outbox's Enqueue, through Mailer.Queued). It has no send id
	// yet: the message is made when a worker runs the call, and its
	// events then carry the same CallID and Email.
	EventQueued EventType = "queued"
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

	// The call the message came from, set on the events of the sending
	// path and empty on those of the receiving side (whose message's
	// record has them).

	// CallID is the id of the call: RunOptions.CallID (package outbox
	// passes its call's id), or else an id drawn for each run of the call
	// (32 hex digits, as a send id; a direct Send is one run).
	CallID string `json:"call_id,omitempty"`
	// From is the call's sender address (Message.FromEmail).
	From string `json:"sender,omitempty"`
	// Subject is the recipient's rendered subject; empty when no message
	// was rendered (EventQueued, EventReject, a failure before rendering).
	Subject string `json:"subject,omitempty"`
	// HTMLTemplateID and TextTemplateID are the call's stored templates
	// (OpSendTemplate's Message.HTMLTemplateID and TextTemplateID); empty
	// for OpSend.
	HTMLTemplateID string `json:"html_template_id,omitempty"`
	TextTemplateID string `json:"text_template_id,omitempty"`
}

// callEvent is the part of the events of call that every recipient's
// shares: its account, list, call id, sender and templates.
func callEvent(op Operation, call *Call, list, callID string) Event {
	e := Event{AccountID: call.AccountID, List: list, CallID: callID, From: trimAddress(call.Message.FromEmail)}
	if op == OpSendTemplate {
		e.HTMLTemplateID, e.TextTemplateID = call.Message.HTMLTemplateID, call.Message.TextTemplateID
	}
	return e
}

// runCallID is the call id of a run given none (RunOptions.CallID): the
// encryption of (nonce, 2^64-1) under the run's send id key, an index no
// recipient has, so it is drawn with the run's keys and differs from
// every send id of the run.
func (j *job) runCallID() string {
	var in, out [aes.BlockSize]byte
	binary.BigEndian.PutUint64(in[:8], j.nonce)
	binary.BigEndian.PutUint64(in[8:], math.MaxUint64)
	j.ids.Encrypt(out[:], in[:])
	return hex.EncodeToString(out[:])
}

// Queued passes to Options.OnEvent what storing call as callID to be sent
// later did to its recipients, checked being Mailer.Validate's results
// for it as operation op: an EventQueued for each recipient left to send
// (a zero Result), and the event of each final Result that is one (a
// reject of the suppression list). Package outbox calls it from Enqueue,
// once the call is written in the application's transaction but before
// that commits: a call whose transaction rolls back leaves its queued
// events, which show as queued messages until the event store's retention
// drops them. It does nothing when Options.OnEvent is nil or checked is
// not one Result per recipient.
func (m *Mailer) Queued(ctx context.Context, callID string, op Operation, call *Call, checked []Result) {
	if m == nil || m.opts.OnEvent == nil || call == nil || len(checked) != len(call.Recipients) {
		return
	}
	list, _ := checkListID(call.Message.Headers)
	base := callEvent(op, call, list, callID)
	base.At = m.opts.Now()
	for i, r := range checked {
		addr := trimAddress(call.Recipients[i].Email)
		if a, problem := parseAddress(addr); problem == "" {
			addr = a
		}
		if r.Status == "" {
			e := base
			e.Type, e.Email = EventQueued, addr
			m.opts.OnEvent(ctx, e)
			continue
		}
		if e, ok := resultEvent(base, addr, r); ok {
			m.opts.OnEvent(ctx, e)
		}
	}
}

// emit passes recipient i's final Result r to Options.OnEvent when it is
// an event (see eventType), with the subject rendered for its message
// ("" when none was).
func (j *job) emit(ctx context.Context, i int, r Result, subject string) {
	base := j.ev
	base.Subject, base.At = subject, j.m.opts.Now()
	if e, ok := resultEvent(base, j.address(i), r); ok {
		j.m.opts.OnEvent(ctx, e)
	}
}

// resultEvent is the event of the final Result r of the recipient whose
// address is addr, made on base (the call's fields, the subject and the
// time), and false when r is no event.
func resultEvent(base Event, addr string, r Result) (Event, bool) {
	t := eventType(r)
	if t == "" {
		return Event{}, false
	}
	e := base
	e.Type, e.SendID, e.Email, e.Reason = t, r.SendID, addr, string(r.Code)
	var de *DeliveryError
	if t != EventSend && errors.As(r.Err, &de) {
		// The recipient's own reply (a sent recipient's error is its bcc
		// copies').
		e.Status, e.Diagnostic = de.Enhanced, deliveryReply(de)
	}
	if e.Diagnostic == "" && len(r.Reason) > len(r.Code)+2 {
		e.Diagnostic = r.Reason[len(r.Code)+2:] // the detail after "code: "
	}
	return e, true
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
