package postroom

import (
	"errors"

	"github.com/postroom/postroom/delivery"
	"github.com/postroom/postroom/option"
)

// OptionsError is option.Error, the one error type of every constructor of
// the module (New here, transport.NewSMTP, httpapi.New, inbound.New, …)
// for a field of its options that it refuses: Field is the field's path,
// such as "Options.VERP.Domain" or "Options.DKIM[0].Key", Reason what is
// wrong with it. Check it with errors.As.
type OptionsError = option.Error

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
	// ErrTransportUnusable is delivery.ErrTransportUnusable, the same
	// value (errors.Is matches either name): wrapped by a transport error
	// that no later message of the call can overcome, such as SMTP AUTH
	// refused with 535 (a configuration error). The Mailer stops the call:
	// the recipient whose message met it and those not yet handed over are
	// deferred with reason transport-unusable, and Send returns the results
	// together with the error.
	ErrTransportUnusable = delivery.ErrTransportUnusable
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

// DeliveryKind is delivery.DeliveryKind: how a delivery failed. Its zero
// value, DeliveryTemporary, is also what any error other than a
// *DeliveryError means.
type DeliveryKind = delivery.DeliveryKind

// The kinds of a DeliveryError (see delivery.DeliveryKind).
const (
	// DeliveryTemporary: not delivered, safe to retry; the Mailer reports
	// the recipient deferred.
	DeliveryTemporary = delivery.DeliveryTemporary
	// DeliveryPermanent: refused for good; the Mailer reports the
	// recipient rejected (hard-bounce).
	DeliveryPermanent = delivery.DeliveryPermanent
	// DeliveryUncertain: may have been delivered; reported unknown.
	DeliveryUncertain = delivery.DeliveryUncertain
)

// DeliveryError is delivery.DeliveryError, what a Transport returns to say
// how delivery failed: its Kind, and the next hop's reply (Code, Enhanced,
// Text), with the underlying error in Err.
type DeliveryError = delivery.DeliveryError

// PartialError is delivery.PartialError, what a Transport returns when
// the message was accepted for Envelope.To[0] but refused for some of the
// bcc copies; the Mailer reports the recipient sent, with reason
// bcc-rejected.
type PartialError = delivery.PartialError

// RefusedRecipient is delivery.RefusedRecipient: one envelope recipient
// refused in a PartialError.
type RefusedRecipient = delivery.RefusedRecipient

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
