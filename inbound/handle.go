package inbound

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/bounce"
	"github.com/postroom/postroom/events"
	"github.com/postroom/postroom/suppression"
)

// Verdict is what the Receiver made of one message for one envelope
// recipient.
type Verdict string

// Verdicts.
const (
	// VerdictRecorded: the report is about a recorded send and names its
	// recipient; Outcome.Events (and Outcome.Listed) say what it proved.
	VerdictRecorded Verdict = "recorded"
	// VerdictUnknownSend: no recorded send has the send id (forged,
	// mistyped, or older than the Sends store keeps), and the grace of
	// Options.UnknownSendGrace is over, or the message would prove
	// nothing anyway (an auto-reply): dropped, logged.
	VerdictUnknownSend Verdict = "unknown-send"
	// VerdictRetryLater: a bounce, delay notice or complaint for a
	// well-formed send id that no recorded send has yet, after the wait
	// of Options.SendWait, first seen by this Receiver less than
	// Options.UnknownSendGrace ago: its send may not be written yet. Nothing was acted on; the message should be
	// offered again later. The server answers 451 4.3.0; a program that
	// Postfix's pipe runs exits 75 (EX_TEMPFAIL), as for a *StoreError.
	VerdictRetryLater Verdict = "retry-later"
	// VerdictOtherRecipient: the send is recorded but the report names
	// only other addresses (a forged report, or a bcc copy's bounce):
	// dropped, logged. Nobody is suppressed on a report's word alone.
	VerdictOtherRecipient Verdict = "other-recipient"
	// VerdictNoAction: an auto-reply, a delivery report, or not a report:
	// nothing to record.
	VerdictNoAction Verdict = "no-action"
)

// Outcome is what Handle did with one message for one envelope recipient.
type Outcome struct {
	Verdict Verdict
	// SendID is the send id the message was tied to: the envelope
	// recipient's, or the report's for a report address; "" when none.
	SendID string
	// Send is the recorded send, when found.
	Send events.Send
	// Report is the parsed message.
	Report *bounce.Report
	// Events are the events emitted to Options.OnEvent, in order.
	Events []postroom.Event
	// Listed are the suppression entries Options.Suppressions made.
	Listed []suppression.Entry
}

// Handle reads one message that came back (a bounce, a complaint, an
// auto-reply, ...) with envelopeRcpt, the address it was delivered to (a
// VERP address of the Mailer, or one of Options.ReportLocals), and records
// what it proves: it is what the server does with each message, for
// applications that receive mail otherwise (a Postfix pipe, an IMAP
// mailbox, a provider's inbound webhook).
//
// Trust: the send id comes from envelopeRcpt (or, for a report address,
// from the returned message's headers) and must be one that Options.Sends
// recorded; the report must name that send's recipient
// (case-insensitively) to act, and acts on that address only. A forged
// report naming someone else silences no one (VerdictOtherRecipient), an
// unknown send id is dropped (VerdictUnknownSend); both are logged and
// return a nil error, so that the sender's server is told the message was
// taken and does not retry. A report for a send id not recorded yet is
// first waited for, up to Options.SendWait, as its send may be written in
// a moment (a bounce through a local relay comes back within
// milliseconds); then asked again for Options.UnknownSendGrace
// (VerdictRetryLater, with a nil error: offer the message again later).
//
// What is proved: a failed recipient whose bounce is Hard is observed as
// suppression.HardBounce (event hard_bounce), another failed one as
// suppression.SoftBounce (soft_bounce; the list's policy decides), a
// complaint as suppression.Complaint (spam), a delayed one only emits a
// deferral event; auto-replies and delivery reports do nothing. Events
// and observations carry the list of the recorded send (events.Send.List):
// a complaint about a list message silences the address's list mail, one
// about a transactional message all its mail (suppression.Observation);
// a bounce silences all mail whatever the message.
//
// Handle reads r to its end, at most Options.MaxMessageBytes
// (ErrMessageTooLarge beyond, and nothing acted on), in bounded memory.
// Errors: *RecipientError (r not read), ErrMessageTooLarge, a read error
// of r, *StoreError (ask again later). ctx bounds the store calls and the
// wait for a send.
func (rc *Receiver) Handle(ctx context.Context, r io.Reader, envelopeRcpt string) (Outcome, error) {
	rt, err := rc.route(envelopeRcpt)
	if err != nil {
		return Outcome{}, err
	}
	m, err := rc.read(r)
	if err != nil {
		return Outcome{}, err
	}
	return rc.apply(ctx, m, rt)
}

// route is where a message for one envelope recipient goes: the send id
// of a VERP address, or report (the send id is the report's).
type route struct {
	addr   string
	sendID string
	report bool
}

// route checks that addr is one of the Receiver's addresses.
func (rc *Receiver) route(addr string) (route, error) {
	if id, ok := rc.opts.VERP.SendID(addr); ok {
		return route{addr: addr, sendID: id}, nil
	}
	a := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(addr), "<"), ">")
	at := strings.LastIndexByte(a, '@')
	if at < 0 || !strings.EqualFold(a[at+1:], rc.opts.VERP.Domain) {
		return route{}, &RecipientError{Address: addr, OtherDomain: true}
	}
	if rc.locals[strings.ToLower(a[:at])] {
		return route{addr: addr, report: true}, nil
	}
	return route{}, &RecipientError{Address: addr}
}

// read parses the message from r, reads r to its end, and reports
// ErrMessageTooLarge beyond Options.MaxMessageBytes.
func (rc *Receiver) read(r io.Reader) (*message, error) {
	lr := &limitReader{r: r, left: rc.opts.MaxMessageBytes}
	rep, perr := bounce.Parse(lr)
	// Read to the end whatever Parse left: the size is known only there,
	// and a report is not acted on before the whole message is taken.
	_, derr := io.Copy(io.Discard, lr)
	if lr.tooLarge {
		return nil, ErrMessageTooLarge
	}
	if err := errors.Join(lr.err, derr); err != nil {
		return nil, fmt.Errorf("inbound: reading the message: %w", err)
	}
	if perr != nil {
		return nil, fmt.Errorf("inbound: parsing the message: %w", perr)
	}
	return &message{rep: rep}, nil
}

// limitReader reads r up to left octets; one more makes it fail with
// tooLarge set. A read error of r is kept in err.
type limitReader struct {
	r        io.Reader
	left     int64
	tooLarge bool
	err      error
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.tooLarge {
		return 0, ErrMessageTooLarge
	}
	if l.err != nil {
		return 0, l.err
	}
	if int64(len(p)) > l.left+1 {
		p = p[:l.left+1]
	}
	n, err := l.r.Read(p)
	if int64(n) > l.left {
		l.tooLarge = true
		l.left = 0
		return 0, ErrMessageTooLarge
	}
	l.left -= int64(n)
	if errors.Is(err, errTransportTooLarge) {
		l.tooLarge = true
		return n, ErrMessageTooLarge
	}
	if err != nil && err != io.EOF {
		l.err = err
	}
	return n, err
}
