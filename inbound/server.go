package inbound

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"strings"

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
	ll := newLimitListener(ln, rc.connLimits())
	srv := smtp.NewServer(backend{rc: rc, ctx: ctx, lmtp: lmtp})
	// Message lines as long as the message may be: a DSN can return a
	// message with lines of any length, and the report is parsed as
	// bytes; Postfix takes such lines too (it breaks them at
	// line_length_limit, 2048). Command lines are bounded by the
	// clientConn (maxCommandLine); this bounds them after STARTTLS, where
	// it cannot see them.
	srv.MaxLineLength = maxLineLength(rc.opts.MaxMessageBytes)
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

// maxLineLength is go-smtp's Server.MaxLineLength for messages of at most
// maxMessage octets: a line with its CRLF is no longer than the message.
func maxLineLength(maxMessage int64) int {
	return int(min(maxMessage+2, math.MaxInt32))
}

// slogPrinter is go-smtp's error log on an slog.Logger. The message is
// the format's text before its first verb, the same for every line of a
// kind (so that Options.MaxLogRepeats limits them together); the line
// itself is the attribute "detail".
type slogPrinter struct{ l *slog.Logger }

func (p slogPrinter) Printf(format string, v ...any) {
	kind, _, _ := strings.Cut(format, "%")
	kind = strings.TrimRight(kind, " :")
	p.l.Warn("inbound: smtp server: "+kind, "detail", fmt.Sprintf(format, v...))
}

func (p slogPrinter) Println(v ...any) {
	p.l.Warn("inbound: smtp server", "detail", fmt.Sprint(v...))
}
