package transport

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/postroom/postroom/delivery"
)

// ErrSTARTTLSInjection: the server's 220 reply to STARTTLS came with more
// bytes after it, before the TLS handshake. A client that read them after
// the handshake would take plaintext that anyone on the path could have
// written (a forged EHLO reply without AUTH's safer mechanisms, say) for
// the server's word under TLS: the STARTTLS injection of CVE-2011-0411,
// here on the reply side. No honest server does this, and no retry can
// fix the path, so it makes the transport unusable like a certificate
// that does not verify.
var ErrSTARTTLSInjection = errors.New("transport: plaintext after the 220 reply to STARTTLS (STARTTLS injection, CVE-2011-0411)")

// SetupStep names a step of an SMTP session's set-up, in the order a
// session meets them. The zero SetupStep is no step and never appears in
// a SetupError.
type SetupStep int

// The steps of a session's set-up.
const (
	// StepDial is the TCP connection (SMTPOptions.Dial).
	StepDial SetupStep = iota + 1
	// StepGreeting is the server's 220 greeting.
	StepGreeting
	// StepHello is EHLO, or HELO after EHLO was refused, before STARTTLS
	// and again after it.
	StepHello
	// StepStartTLS is the STARTTLS command and its reply.
	StepStartTLS
	// StepTLSHandshake is the TLS handshake: after STARTTLS, or first of
	// all with ImplicitTLS. A certificate that does not verify fails here.
	StepTLSHandshake
	// StepAuth is AUTH: the mechanism's choice and the exchange.
	StepAuth
)

var stepNames = [...]string{"", "dial", "greeting", "EHLO", "STARTTLS", "TLS handshake", "AUTH"}

// String is the step's name as SMTP says it: "dial", "greeting", "EHLO",
// "STARTTLS", "TLS handshake" or "AUTH".
func (s SetupStep) String() string {
	if s > 0 && int(s) < len(stepNames) {
		return stepNames[s]
	}
	return "SetupStep(" + strconv.Itoa(int(s)) + ")"
}

// SetupError is a session set-up that failed: where, and why. SMTP.Check
// returns one for every failure, and Send when it could not set up a
// session for a message, so that Result.Err reaches it too (errors.As).
//
// Err is always a *delivery.DeliveryError. Its Code, Enhanced and Text
// are the server's reply when it refused a step (535 to AUTH, say); when
// there was no reply, Text says for people what the server lacks or did
// ("relay offers no STARTTLS"), and the Result's reason repeats it. Err
// wraps delivery.ErrTransportUnusable when no retry can do better
// (see SMTP), together with the sentinel of this package that says what
// is wrong, for errors.Is: ErrTLSUnavailable, ErrInsecureAuth,
// ErrAuthUnavailable, ErrSTARTTLSInjection, ErrCoolingDown; or the
// network's or ctx's error for a set-up that may work when tried again.
type SetupError struct {
	// Addr is SMTPOptions.Addr.
	Addr string
	// Step is the step that failed.
	Step SetupStep
	// Err is why: a *delivery.DeliveryError, never nil.
	Err error
}

// Error says where the set-up failed, then the reply if there was one,
// then the cause.
func (e *SetupError) Error() string {
	s := "transport: SMTP set-up with " + e.Addr + " failed at " + e.Step.String()
	var de *delivery.DeliveryError
	if !errors.As(e.Err, &de) {
		return s + ": " + e.Err.Error()
	}
	if de.Code != 0 {
		s += ": " + strconv.Itoa(de.Code)
		if de.Enhanced != "" {
			s += " " + de.Enhanced
		}
		if de.Text != "" {
			s += " " + de.Text
		}
	} else if de.Err == nil && de.Text != "" {
		s += ": " + de.Text
	}
	if de.Err != nil {
		s += ": " + de.Err.Error()
	}
	return s
}

// Unwrap returns e.Err.
func (e *SetupError) Unwrap() error { return e.Err }

// setupFailed is the SetupError of a step that failed with err, a
// *delivery.DeliveryError.
func (t *SMTP) setupFailed(step SetupStep, err error) *SetupError {
	return &SetupError{Addr: t.opts.Addr, Step: step, Err: err}
}

// unusable is the DeliveryError of a set-up step that no retry can fix
// and that got no reply: text says for people what is wrong, sentinel
// for errors.Is.
func unusable(text string, sentinel error) *delivery.DeliveryError {
	return &delivery.DeliveryError{Text: text, Err: fmt.Errorf("%w: %w", sentinel, delivery.ErrTransportUnusable)}
}

// Check sets up one session with the server, as Send does before its
// first message: connect, greeting, EHLO, STARTTLS and the TLS handshake
// as SMTPOptions.TLS says, AUTH when Username is set. It returns nil when
// every step passed, or a *SetupError saying which step failed and why
// (after Close, an error wrapping ErrClosed);
// errors.Is(err, delivery.ErrTransportUnusable) tells a configuration
// that cannot work (a wrong password, a relay without STARTTLS, a
// certificate that does not verify) from one that may work later (the
// server down, a 421). An application calls it at start to fail fast.
//
// Check is Send's set-up, under the same rules: it waits for a free
// connection slot (closing an idle connection when all MaxConns are
// taken), it dials alone until a set-up has succeeded, and a refusal
// starts SMTPOptions.SetupCoolDown; but it never waits for a cool-down: it
// asks the server whatever the last refusal, and a success ends the
// cool-down, so that Send delivers again at once. The session it sets up
// is kept as an idle connection for the next Send. It honours ctx, and
// ConnectTimeout and CommandTimeout bound each step. After Close it
// returns an error wrapping ErrClosed.
func (t *SMTP) Check(ctx context.Context) error {
	if err := t.pool.begin(); err != nil {
		return err
	}
	defer t.pool.end()
	c, err := t.pool.fresh(ctx)
	var se *SetupError
	switch {
	case err == nil:
	case errors.As(err, &se), errors.Is(err, ErrClosed):
		return err
	default: // ctx done while waiting for a slot
		return t.setupFailed(StepDial, err)
	}
	t.pool.put(c, true)
	return nil
}
