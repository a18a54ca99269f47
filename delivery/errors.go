package delivery

import (
	"errors"
	"strings"

	"github.com/postroom/postroom/internal/replytext"
)

// ErrTransportUnusable is wrapped by a transport error that no later
// message of the call can overcome, such as SMTP AUTH refused with 535
// (a configuration error). The Mailer stops the call: the recipient
// whose message met it and those not yet handed over are deferred with
// reason transport-unusable, and Send returns the results together with
// the error.
//
// Its text keeps the prefix "postroom:" it had before this package held
// it: the root's postroom.ErrTransportUnusable is this same value.
var ErrTransportUnusable = errors.New("postroom: transport unusable")

// DeliveryKind says how a delivery failed. Its zero value, DeliveryTemporary,
// is also what any error other than a *DeliveryError means.
type DeliveryKind uint8

const (
	// DeliveryTemporary: not delivered, safe to retry (an SMTP 4xx reply, a
	// connection refused); the Mailer reports the recipient deferred. It is
	// the zero value because it claims the least: no bounce, no delivery.
	DeliveryTemporary DeliveryKind = iota
	// DeliveryPermanent: the next hop refused the message for good (an SMTP
	// 5xx reply); the Mailer reports the recipient rejected (hard-bounce).
	DeliveryPermanent
	// DeliveryUncertain: the message may have been delivered, for example
	// the connection was lost after the end of data; reported unknown.
	DeliveryUncertain
)

// String is "temporary", "permanent" or "uncertain".
func (k DeliveryKind) String() string {
	switch k {
	case DeliveryPermanent:
		return "permanent"
	case DeliveryUncertain:
		return "uncertain"
	}
	return "temporary"
}

// DeliveryError is what a Transport returns to say how delivery failed:
// Kind says whether the recipient is rejected, deferred or unknown, and
// the reply fields say what the next hop answered. The creator sets Kind
// once; nothing edits it afterwards.
type DeliveryError struct {
	// Kind is how delivery failed; the zero value is DeliveryTemporary.
	Kind DeliveryKind
	// Code is the SMTP reply code, or 0 when there was no reply.
	Code int
	// Enhanced is the RFC 3463 enhanced status code ("5.1.1"), when known.
	Enhanced string
	// Text is the reply text, one line, without CR or LF. Without a
	// reply (Code 0) it may say, for people, what the transport found
	// instead, such as "relay offers no STARTTLS"; never internal text
	// such as a file path or an error chain, since a Result's reason
	// repeats it.
	Text string
	// Err is the underlying error, if any (a network error, ctx's error).
	Err error
}

func (e *DeliveryError) Error() string {
	var b strings.Builder
	b.WriteString("postroom: delivery failed (")
	b.WriteString(e.Kind.String())
	b.WriteString(")")
	if d := e.detail(); d != "" {
		b.WriteString(": ")
		b.WriteString(d)
	}
	return b.String()
}

// detail is the reply, or the underlying error's text.
func (e *DeliveryError) detail() string {
	if r := replytext.Reply(e.Code, e.Enhanced, e.Text); r != "" {
		return r
	}
	if e.Err != nil {
		return e.Err.Error()
	}
	return ""
}

// Unwrap returns e.Err.
func (e *DeliveryError) Unwrap() error { return e.Err }

// PartialError is what a Transport returns when the message was accepted
// for the first envelope recipient (Envelope.To[0]) but refused for some of
// the others (the bcc copies). The Mailer reports the recipient sent, with
// reason bcc-rejected naming the refused addresses.
//
// When Envelope.To[0] itself is refused, a Transport returns that
// recipient's DeliveryError instead and delivers to nobody.
type PartialError struct {
	Refused []RefusedRecipient
}

// RefusedRecipient is one envelope recipient refused in a PartialError.
type RefusedRecipient struct {
	Address string
	Err     error
}

func (e *PartialError) Error() string {
	var b strings.Builder
	b.WriteString("postroom: refused for ")
	for i, r := range e.Refused {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(r.Address)
		if r.Err != nil {
			b.WriteString(" (")
			b.WriteString(r.Err.Error())
			b.WriteString(")")
		}
	}
	return b.String()
}

// Unwrap returns the refusals' errors.
func (e *PartialError) Unwrap() []error {
	errs := make([]error, 0, len(e.Refused))
	for _, r := range e.Refused {
		if r.Err != nil {
			errs = append(errs, r.Err)
		}
	}
	return errs
}
