package inbound

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"

	"github.com/emersion/go-smtp"
)

// errTransportTooLarge is what go-smtp's DATA reader returns past
// Server.MaxMessageBytes.
var errTransportTooLarge = smtp.ErrDataTooLarge

// Serve serves SMTP on ln, as the MX of the VERP domain: RCPT is taken
// only for the Receiver's addresses (550 5.1.1 for another address of the
// domain, 550 5.7.1 for another domain: never a relay), and each message
// is handled as Handle does, once for each recipient. The reply to DATA
// is 250 when the message was taken (acted on or dropped), 552 5.3.4 when
// too large, 451 4.3.0 when a store failed or the send id is not recorded
// yet (VerdictRetryLater): the sender retries. Over SMTP, one reply
// answers every recipient, so a message is proven for all before it is
// recorded for any, and a 451 for one leaves nothing recorded for the
// others (ServeLMTP replies, and records, per recipient).
//
// Serve returns nil when ctx is done, after closing ln and every
// connection, when no goroutine it started is left; or the error of ln's
// Accept. ctx also bounds the store calls of each message. It uses
// emersion/go-smtp's server with the Options' limits, and STARTTLS when
// Options.TLS is set.
func (rc *Receiver) Serve(ctx context.Context, ln net.Listener) error {
	return rc.serve(ctx, ln, false)
}

// ServeLMTP is Serve speaking LMTP (RFC 2033), with one reply per
// recipient after DATA: for a local Postfix whose transport_maps sends the
// VERP domain to lmtp:host:port (or lmtp:unix:path with a Unix listener).
func (rc *Receiver) ServeLMTP(ctx context.Context, ln net.Listener) error {
	return rc.serve(ctx, ln, true)
}

func (rc *Receiver) serve(ctx context.Context, ln net.Listener, lmtp bool) error {
	ll := newLimitListener(ln, rc.opts.MaxConnections)
	srv := smtp.NewServer(backend{rc: rc, ctx: ctx, lmtp: lmtp})
	srv.LMTP = lmtp
	srv.Domain = rc.opts.Hostname
	srv.MaxMessageBytes = rc.opts.MaxMessageBytes
	srv.MaxRecipients = rc.opts.MaxRecipients
	srv.ReadTimeout = rc.opts.ReadTimeout
	srv.WriteTimeout = rc.opts.WriteTimeout
	srv.TLSConfig = rc.opts.TLS
	srv.EnableSMTPUTF8 = true // reports are read as bytes; any address is compared as such
	srv.ErrorLog = slogPrinter{rc.opts.Logger}

	served := make(chan error, 1)
	go func() { served <- srv.Serve(ll) }()
	var err error
	select {
	case err = <-served:
	case <-ctx.Done():
		ll.Close()
		<-served // Accept fails: no connection is taken after this
	}
	// Shutdown closes the (closed) listener and waits for every
	// connection's goroutine; closing the connections ends them.
	shut := make(chan struct{})
	go func() {
		srv.Shutdown(context.Background())
		close(shut)
	}()
	ll.Close()
	ll.closeConns()
	<-shut
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// backend makes a session per connection; ctx is Serve's.
type backend struct {
	rc   *Receiver
	ctx  context.Context
	lmtp bool
}

func (b backend) NewSession(*smtp.Conn) (smtp.Session, error) {
	return &session{rc: b.rc, ctx: b.ctx, lmtp: b.lmtp}, nil
}

// session is one connection's transaction state.
type session struct {
	rc     *Receiver
	ctx    context.Context
	lmtp   bool     // a reply per recipient after DATA
	rcpts  []string // as given to Rcpt, for LMTP's per-recipient replies
	routes []route
}

func (s *session) Reset()        { s.rcpts, s.routes = nil, nil }
func (s *session) Logout() error { return nil }

func (s *session) Mail(string, *smtp.MailOptions) error {
	s.Reset()
	return nil
}

func (s *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	rt, err := s.rc.route(to)
	var re *RecipientError
	if errors.As(err, &re) {
		if re.OtherDomain {
			return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 7, 1}, Message: "Relay access denied"}
		}
		return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "No such user"}
	}
	s.rcpts = append(s.rcpts, to)
	s.routes = append(s.routes, rt)
	return nil
}

// Data reads the message once and applies it for every recipient; one
// reply for all.
func (s *session) Data(r io.Reader) error {
	errs := s.handle(r)
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// LMTPData is Data with a reply per recipient.
func (s *session) LMTPData(r io.Reader, status smtp.StatusCollector) error {
	errs := s.handle(r)
	for i, rcpt := range s.rcpts {
		status.SetStatus(rcpt, errs[i])
	}
	return nil
}

// handle reads the message and applies it for each recipient, returning
// each recipient's SMTP error or nil.
func (s *session) handle(r io.Reader) []error {
	errs := make([]error, len(s.routes))
	rep, err := s.rc.read(r)
	if err != nil {
		for i := range errs {
			errs[i] = smtpError(err)
		}
		return errs
	}
	// Prove for every recipient before recording for any: over SMTP one
	// reply answers them all, and when it asks for the message again the
	// retry must find nothing recorded yet (a soft bounce counted twice
	// would bring its address nearer the list).
	proofs := make([]proof, len(s.routes))
	var retry error
	for i, rt := range s.routes {
		p, err := s.rc.prove(s.ctx, rep, rt)
		switch {
		case err != nil:
			s.rc.opts.Logger.Error("inbound: looking up a report's send failed; the sender is asked to retry", "rcpt", rt.addr, "err", err)
			errs[i] = smtpError(err)
		case p.out.Verdict == VerdictRetryLater:
			errs[i] = errRetryLater
		}
		if retry == nil {
			retry = errs[i]
		}
		proofs[i] = p
	}
	if retry != nil && !s.lmtp {
		for i := range errs {
			errs[i] = retry
		}
		return errs
	}
	for i, p := range proofs {
		if errs[i] != nil || p.out.Verdict != VerdictRecorded {
			continue
		}
		if _, err := s.rc.record(s.ctx, p); err != nil {
			s.rc.opts.Logger.Error("inbound: recording a report failed; the sender is asked to retry", "rcpt", s.routes[i].addr, "err", err)
			errs[i] = smtpError(err)
		}
	}
	return errs
}

// errRetryLater is the reply to a report for a send id not recorded yet
// (VerdictRetryLater).
var errRetryLater = &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: "Send not recorded yet, try again later"}

// smtpError is the reply for Handle's error.
func smtpError(err error) error {
	if errors.Is(err, ErrMessageTooLarge) {
		return smtp.ErrDataTooLarge
	}
	var se *StoreError
	if errors.As(err, &se) {
		return &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: "Temporary failure, try again later"}
	}
	return &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: "Error reading the message, try again later"}
}

// slogPrinter is go-smtp's error log on an slog.Logger.
type slogPrinter struct{ l *slog.Logger }

func (p slogPrinter) Printf(format string, v ...any) {
	p.l.Warn("inbound: smtp server: " + fmt.Sprintf(format, v...))
}

func (p slogPrinter) Println(v ...any) { p.l.Warn("inbound: smtp server: " + fmt.Sprint(v...)) }
