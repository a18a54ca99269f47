package postroom

import (
	"errors"
	"strconv"
	"strings"

	"github.com/postroom/postroom/internal/replytext"
)

// Sentinel errors. Call-level errors mean nothing was sent, except where a
// Send returns results too (see Mailer.Send).
var (
	// ErrUnauthorized: Options.Auth refused the call's account_id and key.
	ErrUnauthorized = errors.New("postroom: unauthorized")
	// ErrTemplateNotFound: a TemplateStore has no template by that id in the
	// call's account. Stores wrap it; the Mailer wraps it in a ValidationError
	// naming message.html_template_id or message.text_template_id, or, for a
	// partial, the field of the template that names it (through a
	// *PartialChainError).
	ErrTemplateNotFound = errors.New("postroom: template not found")
	// ErrTemplateSyntax: a template (subject, html, text or a header value)
	// does not compile: a syntax error, an unknown helper, a helper called
	// with the wrong number of arguments, a partial that does not compile
	// or calls itself, or a limit passed. The Mailer wraps it in a ValidationError naming the part
	// and the position.
	ErrTemplateSyntax = errors.New("postroom: template error")
	// ErrNoRecipients: the call has no recipients.
	ErrNoRecipients = errors.New("postroom: no recipients")
	// ErrTooManyRecipients: the call has more than Options.MaxRecipients.
	ErrTooManyRecipients = errors.New("postroom: too many recipients")
	// ErrTransportUnusable is wrapped by a transport error that no later
	// message of the call can overcome, such as SMTP AUTH refused with 535
	// (a configuration error). The Mailer stops the call: the recipient
	// whose message met it and those not yet handed over are deferred with
	// reason transport-unusable, and Send returns the results together with
	// the error.
	ErrTransportUnusable = errors.New("postroom: transport unusable")
	// ErrZeroMailer is the error of every method of a Mailer not made by New
	// (the zero Mailer, or a nil *Mailer), rather than a panic: a Mailer has
	// no usable zero value, since it needs a Transport and an Authenticator.
	ErrZeroMailer = errors.New("postroom: Mailer not made by New")
)

// ValidationError reports one problem with a call's content, found before
// anything was sent. Several may come back joined with errors.Join; use
// errors.As to reach the first, or the Unwrap() []error of the joined error
// for all of them.
type ValidationError struct {
	// Field is the path of the offending field in the call's JSON, such as
	// "message.from_email", "message.images[1].cid" or "recipients".
	Field string
	// Reason says what is wrong, in lower case.
	Reason string
	// Err is the underlying error, if any (for example ErrTemplateNotFound).
	Err error
}

func (e *ValidationError) Error() string {
	return "postroom: invalid " + e.Field + ": " + e.Reason
}

// Unwrap returns e.Err.
func (e *ValidationError) Unwrap() error { return e.Err }

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
	if r := e.reply(); r != "" {
		return r
	}
	if e.Err != nil {
		return e.Err.Error()
	}
	return ""
}

// reply is the next hop's reply, "code enhanced text", made one line of
// at most replytext.Max octets by replytext.Line (whichever Transport
// made e), or "" when there was none.
func (e *DeliveryError) reply() string {
	var parts []string
	if e.Code != 0 {
		parts = append(parts, strconv.Itoa(e.Code))
	}
	if e.Enhanced != "" {
		parts = append(parts, e.Enhanced)
	}
	if e.Text != "" {
		parts = append(parts, e.Text)
	}
	return replytext.Line(strings.Join(parts, " "))
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

// ValidationErrors returns the *ValidationError values err consists of:
// err itself, or the parts of an errors.Join at any depth, in order, found
// through any wrapping (fmt.Errorf("...: %w", err)). It returns nil when
// err is nil or holds any other error, such as a template store that
// failed to read: a problem that is not the caller's to fix.
func ValidationErrors(err error) []*ValidationError {
	var ves []*ValidationError
	if !collectValidation(err, &ves) || len(ves) == 0 {
		return nil
	}
	return ves
}

// collectValidation appends the *ValidationError values err consists of to
// ves, and reports whether err consists of nothing else.
func collectValidation(err error, ves *[]*ValidationError) bool {
	switch e := err.(type) {
	case *ValidationError:
		*ves = append(*ves, e)
		return true
	case interface{ Unwrap() []error }:
		for _, part := range e.Unwrap() {
			if !collectValidation(part, ves) {
				return false
			}
		}
		return true
	case interface{ Unwrap() error }:
		return collectValidation(e.Unwrap(), ves)
	}
	return false
}
