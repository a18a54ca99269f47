package postroom

// Results: what Send reports per recipient, and how an outcome travels as
// data from where it is decided (validation, render, the transport's error)
// to where its Result is built. Nothing here reads meaning back out of
// error or reason text.

import (
	"context"
	"errors"
	"net"
	"strings"
	"syscall"

	"github.com/postroom/postroom/internal/mimemsg"
	"github.com/postroom/postroom/internal/replytext"
)

// Result is the outcome for one recipient. Send and SendTemplate return
// exactly one per recipient, in input order.
//
// Its JSON form is the spec's {"email", "status", "reason", "send_id"}.
// Reason is Code, optionally followed by ": " and detail for people: what
// is wrong with an address, the next hop's reply, the params missing. It
// never holds postroom's or a transport's own error text (file paths,
// network errors, error chains): that goes to Options.Logger, and to Err.
// See the package documentation for the table of statuses and reasons.
//
// Go callers branch on Status and Code and reach the transport's error
// through Err with errors.As; they never need to parse Reason.
//
// SendID is 32 lowercase hex characters for every recipient that got a
// message, and empty for StatusInvalid and for a recipient rejected by
// Options.Suppressions.
type Result struct {
	Email  string `json:"email"`
	Status Status `json:"status"`
	Reason string `json:"reason"`
	SendID string `json:"send_id"`

	// Code is the reason code alone: Reason up to any ": ". It is empty
	// when Reason is (a message sent or queued as asked).
	Code ReasonCode `json:"-"`

	// Err is the error behind the outcome, or nil. For a recipient handed
	// to the transport it is the transport's error as returned: errors.As
	// reaches its *DeliveryError (with the SMTP reply code and enhanced
	// status code) or its *PartialError (bcc-rejected). For a recipient not
	// attempted it is ctx's error, or the error wrapping
	// ErrTransportUnusable that stopped the call. For render-error it is
	// the template's error. For a recipient rejected by
	// Options.Suppressions it is a *SuppressedError holding the entry. It
	// is nil when the transport accepted the message for every address,
	// and for the other invalid outcomes. Err is never written to JSON.
	Err error `json:"-"`
}

// Status is what happened to one recipient. Its values are the constants
// below; the zero Status is no outcome and never appears in a Result.
type Status string

// Result statuses.
const (
	// StatusSent: the transport accepted the message.
	StatusSent Status = "sent"
	// StatusQueued: accepted by a transport that delivers later (see Queuer).
	StatusQueued Status = "queued"
	// StatusInvalid: no message was made for this recipient; nothing was sent.
	StatusInvalid Status = "invalid"
	// StatusRejected: the next hop refused the message for good, or
	// Options.Suppressions lists the address (no message was made).
	StatusRejected Status = "rejected"
	// StatusDeferred: not delivered; safe to retry.
	StatusDeferred Status = "deferred"
	// StatusUnknown: the message may have been delivered; do not blindly retry.
	StatusUnknown Status = "unknown"
)

// ReasonCode is the stable kebab-case code at the start of a Result's
// Reason. Its values are the constants below; the zero ReasonCode goes
// with an empty Reason.
type ReasonCode string

// Result reason codes.
const (
	ReasonBCCRejected      ReasonCode = "bcc-rejected"
	ReasonInvalidEmail     ReasonCode = "invalid-email"
	ReasonDuplicate        ReasonCode = "duplicate"
	ReasonMissingParam     ReasonCode = "missing-param"
	ReasonRenderError      ReasonCode = "render-error"
	ReasonHeaderInjection  ReasonCode = "header-injection"
	ReasonMessageTooLarge  ReasonCode = "message-too-large"
	ReasonHardBounce       ReasonCode = "hard-bounce"
	ReasonSoftBounce       ReasonCode = "soft-bounce"
	ReasonConnectionFailed ReasonCode = "connection-failed"
	ReasonTimeout          ReasonCode = "timeout"
	ReasonCanceled         ReasonCode = "canceled"
	ReasonConnectionLost   ReasonCode = "connection-lost-after-data"
	ReasonNotSent          ReasonCode = "not-sent"

	// ReasonSpam, ReasonUnsub and ReasonManual are, with ReasonHardBounce
	// and ReasonSoftBounce, the reasons of a recipient rejected because
	// Options.Suppressions lists its address: it complained, it
	// unsubscribed, it was listed by hand.
	ReasonSpam   ReasonCode = "spam"
	ReasonUnsub  ReasonCode = "unsub"
	ReasonManual ReasonCode = "manual"

	// ReasonTransportUnusable: the transport cannot deliver anything as
	// configured (an error wrapping ErrTransportUnusable, such as a
	// refused login or a relay without STARTTLS); its detail is the
	// refusal's reply or what the transport found.
	ReasonTransportUnusable ReasonCode = "transport-unusable"

	// ReasonInterrupted: a run that records its call durably (package
	// idempotency's Run, package outbox's jobs) may have handed the
	// message to the transport (it recorded that it was about to) and then
	// stopped (its process died) before the outcome was recorded. The status is
	// unknown: the message may have been delivered, and it is never sent
	// again.
	ReasonInterrupted ReasonCode = "interrupted"
)

// CallStatus is the progress of a call run later, outside the request
// that made it: what package outbox's Status returns and what package
// httpapi answers at GET /api/1.0/calls/{id}. Its JSON form is
// {"id", "state", "counts", "results", "later"}. The root package never
// makes one: it is declared here so that a queue and an HTTP handler
// share it without importing each other.
type CallStatus struct {
	// ID is the call's id, as its queue gave it.
	ID    string    `json:"id"`
	State CallState `json:"state"`
	// List is the call's list (its List-Id's id, lower-cased; see
	// ListID), or "" for a transactional call.
	List string `json:"list,omitempty"`
	// Counts is the number of the call's recipients by status: a
	// recipient without its final result yet counts as StatusQueued.
	// Nil when the queue does not count (and in an HTTP 202 answer).
	Counts map[Status]int `json:"counts,omitempty"`
	// Results are the call's results once State is CallDone: one per
	// recipient, in the call's order, as Run returns them (with Code, and
	// no Err). Nil before.
	Results []Result `json:"results,omitempty"`
	// Later is what came back after the messages left, once State is
	// CallDone: for each recipient whose Result is sent or queued and
	// whose message has one, the latest event recorded about that message
	// since (EventHardBounce, EventSoftBounce, EventSpam, EventUnsub, or
	// EventDeferral for a delay notice), in the order of Results; each
	// names its message by SendID, as Results do. A Result itself never
	// changes once final: a bounce that came back later shows here. Nil
	// when nothing came back, or when the queue reads no event log
	// (package outbox without Options.Events).
	Later []Event `json:"later,omitempty"`
}

// CallState is the state of a call run later: CallQueued, CallRunning or
// CallDone.
type CallState string

// Call states.
const (
	// CallQueued: stored, no recipient has its final result yet.
	CallQueued CallState = "queued"
	// CallRunning: started; some recipients have their final result.
	CallRunning CallState = "running"
	// CallDone: every recipient has its final result.
	CallDone CallState = "done"
)

// ErrCallNotFound is the error, wrapped or not, of a queue's status of a
// call id it does not know (package outbox's Status; an HTTP handler
// answers it 404).
var ErrCallNotFound = errors.New("postroom: call not found")

// outcome is a recipient's outcome as decided: what its Result will say,
// kept as data until the Result is built.
type outcome struct {
	status Status
	code   ReasonCode
	detail string // for the caller: no internal text
	err    error  // the error behind it, for Result.Err and the log
	// logErr says err holds more than detail shows (a network error, a
	// file path, a panic), so the Mailer logs it.
	logErr bool
}

// reason is the Result's Reason: the code and the detail.
func (o outcome) reason() string {
	if o.detail == "" {
		return string(o.code)
	}
	return string(o.code) + ": " + o.detail
}

// result is the Result of o for a recipient.
func (o outcome) result(email, sendID string) Result {
	return Result{Email: email, Status: o.status, Reason: o.reason(), SendID: sendID, Code: o.code, Err: o.err}
}

// invalid is the outcome of a recipient that gets no message.
func invalid(code ReasonCode, detail string) outcome {
	return outcome{status: StatusInvalid, code: code, detail: detail}
}

// outcomeError carries an outcome out of a function that returns an
// error, such as a render: outcomeOf takes it back as it was.
type outcomeError struct{ o outcome }

func (e *outcomeError) Error() string { return "postroom: " + e.o.reason() }

// Unwrap returns the error behind the outcome, if any.
func (e *outcomeError) Unwrap() error { return e.o.err }

// asError returns an error carrying o, for outcomeOf to take back.
func (o outcome) asError() error { return &outcomeError{o} }

// outcomeOf is the outcome of a recipient whose render or message
// writing failed with err: deferred when ctx ended it, the outcome an
// error made by asError carries, render-error naming the field of a
// *mimemsg.FieldError (a value that cannot be folded), or render-error
// without detail for any other error.
func outcomeOf(err error) outcome {
	if fromContext(err) {
		return deferredBy(err)
	}
	var re *outcomeError
	if errors.As(err, &re) {
		return re.o
	}
	var he *mimemsg.FieldError
	if errors.As(err, &he) {
		return outcome{status: StatusInvalid, code: ReasonRenderError, detail: he.Field + ": value cannot be folded within 998-octet lines", err: err}
	}
	return outcome{status: StatusInvalid, code: ReasonRenderError, err: err, logErr: true}
}

// classify maps a Transport's error to an outcome. The detail is the next
// hop's reply, when there is one; never the error's own text.
func classify(err error, queued bool) outcome {
	accepted := StatusSent
	if queued {
		accepted = StatusQueued
	}
	if err == nil {
		return outcome{status: accepted}
	}
	var pe *PartialError
	if errors.As(err, &pe) {
		addrs := make([]string, len(pe.Refused))
		for i, r := range pe.Refused {
			addrs[i] = r.Address
			if reply := replyOf(r.Err); reply != "" {
				addrs[i] += " (" + reply + ")"
			}
		}
		return outcome{status: accepted, code: ReasonBCCRejected, detail: strings.Join(addrs, ", "), err: err}
	}
	reply := replyOf(err)
	if errors.Is(err, ErrTransportUnusable) {
		// Not this recipient's doing (a refused login, say): no bounce.
		return outcome{status: StatusDeferred, code: ReasonTransportUnusable, detail: reply, err: err, logErr: true}
	}
	var de *DeliveryError
	if errors.As(err, &de) {
		switch {
		case de.Kind == DeliveryUncertain:
			return outcome{status: StatusUnknown, code: ReasonConnectionLost, detail: reply, err: err, logErr: reply == ""}
		case de.Kind == DeliveryPermanent:
			return outcome{status: StatusRejected, code: ReasonHardBounce, detail: reply, err: err}
		case de.Code != 0:
			return outcome{status: StatusDeferred, code: ReasonSoftBounce, detail: reply, err: err}
		}
	}
	if code := contextCode(err); code != "" {
		// ctx's own error says nothing more; a network timeout does.
		return outcome{status: StatusDeferred, code: code, err: err, logErr: !fromContext(err)}
	}
	if reply == "" {
		reply = networkDetail(err)
	}
	return outcome{status: StatusDeferred, code: ReasonConnectionFailed, detail: reply, err: err, logErr: true}
}

// networkDetail says, for people, what kind of network failure err holds
// ("connection refused", "no such host"), or "" when it holds none it
// knows. It is read from err's types and errnos, never from its text, and
// names no address, host or port: those stay in the log.
func networkDetail(err error) string {
	var dnsErr *net.DNSError
	var timeout interface{ Timeout() bool }
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.As(err, &dnsErr) && dnsErr.IsNotFound:
		return "no such host"
	case errors.As(err, &dnsErr):
		return "host lookup failed"
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return "no route to host"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset"
	case errors.As(err, &timeout) && timeout.Timeout():
		return "timed out"
	}
	return ""
}

// notAttempted is the outcome of a recipient not handed over because the
// transport said, for an earlier one, that it cannot deliver anything.
func notAttempted(stop error) outcome {
	detail := "not attempted"
	if reply := replyOf(stop); reply != "" {
		detail += ": " + reply
	}
	return outcome{status: StatusDeferred, code: ReasonTransportUnusable, detail: detail, err: stop}
}

// deferredBy is the outcome of a recipient whose message ctx's end kept
// from being made or handed over: err is ctx's error.
func deferredBy(err error) outcome {
	return outcome{status: StatusDeferred, code: contextCode(err), err: err}
}

// contextCode is the reason code for an error caused by a context or a
// deadline, or "".
func contextCode(err error) ReasonCode {
	var timeout interface{ Timeout() bool }
	switch {
	case errors.Is(err, context.Canceled):
		return ReasonCanceled
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &timeout) && timeout.Timeout():
		return ReasonTimeout
	}
	return ""
}

func fromContext(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// replyOf is the next hop's reply in err's *DeliveryError ("550 5.1.1
// text"), or "".
func replyOf(err error) string {
	var de *DeliveryError
	if errors.As(err, &de) {
		return deliveryReply(de)
	}
	return ""
}

// deliveryReply is de's next hop's reply, "code enhanced text", made one
// line of at most replytext.Max octets by replytext.Line (whichever
// Transport made de), or "" when there was none: the rule DeliveryError's
// own text follows too.
func deliveryReply(de *DeliveryError) string {
	return replytext.Reply(de.Code, de.Enhanced, de.Text)
}

// CountStatuses returns how many of results have each Status: the
// summary the Mailer's debug record of a call and the HTTP handler's
// request log show.
func CountStatuses(results []Result) map[Status]int {
	n := map[Status]int{}
	for _, r := range results {
		n[r.Status]++
	}
	return n
}
