package transport

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/textproto"
	"strconv"
	"strings"
	"sync"
	"time"

	gomail "github.com/wneessen/go-mail/smtp"

	"github.com/postroom/postroom"
)

// smtpConn is one session with the server, used by one goroutine at a time
// (its owner, see pool).
type smtpConn struct {
	opts *SMTPOptions
	raw  net.Conn // the TCP connection, whose deadlines govern TLS too
	c    *gomail.Client
	bw   *bufio.Writer // over c.Text.W, for commands and message text

	tls                bool
	pipelining         bool
	enhanced           bool
	utf8, eightBitMIME bool
	sizeOffered        bool
	maxSize            int64    // SIZE's limit; 0 when none
	chunking           bool     // CHUNKING offered and not disabled: BDAT
	num                [20]byte // scratch for numbers on the wire

	uses      int // transactions started
	dirty     bool
	idleSince time.Time
	idleTimer *time.Timer

	mu      sync.Mutex
	aborted bool   // ctx was done: the deadline stays in the past
	abortFn func() // abort, bound once rather than once per transaction
}

// deadline sets the connection's deadline d from now, unless a done ctx
// has aborted it.
func (c *smtpConn) deadline(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.aborted {
		return
	}
	_ = c.raw.SetDeadline(time.Now().Add(d))
}

// abort makes every blocked and future read and write fail at once. It
// runs from context.AfterFunc when a Send's ctx is done.
func (c *smtpConn) abort() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.aborted = true
	_ = c.raw.SetDeadline(time.Unix(1, 0))
}

func (c *smtpConn) close() { _ = c.raw.Close() }

// quit says QUIT and does not wait long for the answer.
func (c *smtpConn) quit(t *SMTP) {
	c.deadline(min(t.opts.CommandTimeout, 2*time.Second))
	if _, err := c.bw.WriteString("QUIT\r\n"); err == nil && c.flush() == nil {
		_, _, _ = readReply(c.c.Text.R)
	}
}

func (c *smtpConn) flush() error {
	if err := c.bw.Flush(); err != nil {
		return err
	}
	return c.c.Text.W.Flush()
}

// noop checks an idle connection.
func (c *smtpConn) noop(ctx context.Context, t *SMTP) error {
	stop := context.AfterFunc(ctx, c.abortFn)
	defer stop()
	c.deadline(t.opts.CommandTimeout)
	if _, err := c.bw.WriteString("NOOP\r\n"); err != nil {
		return err
	}
	if err := c.flush(); err != nil {
		return err
	}
	code, _, err := readReply(c.c.Text.R)
	if err == nil && code/100 != 2 {
		err = fmt.Errorf("NOOP: %d", code)
	}
	return err
}

// dial opens and sets up a session: TCP, TLS, greeting, EHLO, STARTTLS,
// AUTH. Its errors are DeliveryErrors, wrapping ErrTransportUnusable when no
// later attempt can do better.
func (t *SMTP) dial(ctx context.Context) (*smtpConn, error) {
	o := &t.opts
	dctx, cancel := context.WithTimeout(ctx, o.ConnectTimeout)
	raw, err := o.Dial(dctx, "tcp", o.Addr)
	cancel()
	if err != nil {
		return nil, ctxError(ctx, fmt.Errorf("dial %s: %w", o.Addr, err))
	}
	c := &smtpConn{raw: raw, opts: &t.opts}
	c.abortFn = c.abort
	stop := context.AfterFunc(ctx, c.abortFn)
	err = t.setup(ctx, c)
	if !stop() && err == nil {
		err = ctxError(ctx, errors.New("session setup"))
	}
	if err != nil {
		c.close()
		return nil, err
	}
	c.deadline(o.CommandTimeout)
	return c, nil
}

func (t *SMTP) setup(ctx context.Context, c *smtpConn) error {
	o := &t.opts
	c.deadline(o.ConnectTimeout)
	var nc net.Conn = c.raw
	if o.TLS == ImplicitTLS {
		tc := tls.Client(c.raw, t.tlsConf)
		if err := tc.HandshakeContext(ctx); err != nil {
			return tlsError(ctx, err)
		}
		nc, c.tls = tc, true
	}
	cl, err := gomail.NewClient(nc, t.host)
	if err != nil {
		return sessionError(ctx, "greeting", err, true)
	}
	c.c = cl
	c.deadline(o.CommandTimeout)
	if err := cl.Hello(o.HELOName); err != nil {
		return sessionError(ctx, "EHLO", err, true)
	}
	if o.TLS == StartTLSOpportunistic || o.TLS == StartTLSRequired {
		if err := t.startTLS(ctx, c); err != nil {
			return err
		}
	}
	c.deadline(o.CommandTimeout)
	if o.Username != "" {
		if err := t.auth(ctx, c); err != nil {
			return err
		}
	}
	c.pipelining, _ = cl.Extension("PIPELINING")
	c.enhanced, _ = cl.Extension("ENHANCEDSTATUSCODES")
	c.utf8, _ = cl.Extension("SMTPUTF8")
	c.eightBitMIME, _ = cl.Extension("8BITMIME")
	c.chunking, _ = cl.Extension("CHUNKING")
	c.chunking = c.chunking && !o.DisableChunking
	if ok, v := cl.Extension("SIZE"); ok {
		c.sizeOffered = true
		c.maxSize, _ = strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	}
	c.bw = bufio.NewWriterSize(cl.Text.W, 64<<10)
	return nil
}

// startTLS upgrades the session with STARTTLS when offered. A server that
// refuses the command leaves the session in plaintext, which opportunistic
// TLS accepts (RFC 3207 §4); a failed handshake is never downgraded.
func (t *SMTP) startTLS(ctx context.Context, c *smtpConn) error {
	o := &t.opts
	if ok, _ := c.c.Extension("STARTTLS"); !ok {
		if o.TLS == StartTLSRequired {
			return &postroom.DeliveryError{Err: fmt.Errorf("%w: %w", ErrTLSUnavailable, postroom.ErrTransportUnusable)}
		}
		return nil
	}
	c.deadline(o.ConnectTimeout)
	err := c.c.StartTLS(t.tlsConf)
	var te *textproto.Error
	switch {
	case err == nil:
		c.tls = true
		return nil
	case isTLSError(err):
		return tlsError(ctx, err)
	case o.TLS == StartTLSOpportunistic && errors.As(err, &te):
		return nil
	}
	return sessionError(ctx, "STARTTLS", err, o.TLS == StartTLSRequired)
}

// auth runs AUTH with go-mail's mechanisms, never over plaintext unless
// AllowInsecureAuth.
func (t *SMTP) auth(ctx context.Context, c *smtpConn) error {
	o := &t.opts
	if !c.tls && !o.AllowInsecureAuth {
		return &postroom.DeliveryError{Err: fmt.Errorf("%w: %w", ErrInsecureAuth, postroom.ErrTransportUnusable)}
	}
	ok, offered := c.c.Extension("AUTH")
	mechs := strings.Fields(strings.ToUpper(offered))
	mech := o.Auth
	if mech == "" {
		for _, m := range []AuthMechanism{AuthPlain, AuthLogin, AuthCRAMMD5} {
			if containsFold(mechs, string(m)) {
				mech = m
				break
			}
		}
	}
	if !ok || mech == "" || !containsFold(mechs, string(mech)) {
		return &postroom.DeliveryError{Err: fmt.Errorf("%w (%s; offered: %q): %w", ErrAuthUnavailable, mech, offered, postroom.ErrTransportUnusable)}
	}
	var a gomail.Auth
	switch mech {
	case AuthPlain:
		a = gomail.PlainAuth("", o.Username, o.Password, t.host, true)
	case AuthLogin:
		a = gomail.LoginAuth(o.Username, o.Password, t.host, true)
	case AuthCRAMMD5:
		a = gomail.CRAMMD5Auth(o.Username, o.Password)
	case AuthXOAUTH2:
		a = gomail.XOAuth2Auth(o.Username, o.Password)
	}
	if err := c.c.Auth(a); err != nil {
		return sessionError(ctx, "AUTH", err, true)
	}
	return nil
}

func containsFold(list []string, s string) bool {
	for _, v := range list {
		if strings.EqualFold(v, s) {
			return true
		}
	}
	return false
}

// sessionError classifies a failure before any transaction. A reply: 4xx
// is temporary; 5xx makes the transport unusable when fatal5xx (the same
// session setup would fail for every message), since the recipient was not
// refused. No reply: temporary.
func sessionError(ctx context.Context, stage string, err error, fatal5xx bool) error {
	var te *textproto.Error
	if errors.As(err, &te) {
		de := replyError(te.Code, te.Msg, true)
		de.Permanent = false
		if te.Code/100 == 5 && fatal5xx {
			de.Err = fmt.Errorf("%s refused: %w", stage, postroom.ErrTransportUnusable)
		} else {
			de.Err = fmt.Errorf("%s refused", stage)
		}
		return de
	}
	return ctxError(ctx, fmt.Errorf("%s: %w", stage, err))
}

// tlsError classifies a failed TLS handshake: a certificate that does not
// verify, or a TLS alert, is a configuration error; a lost connection is
// temporary.
func tlsError(ctx context.Context, err error) error {
	if isTLSError(err) {
		return &postroom.DeliveryError{Err: fmt.Errorf("TLS handshake: %w: %w", err, postroom.ErrTransportUnusable)}
	}
	return ctxError(ctx, fmt.Errorf("TLS handshake: %w", err))
}

func isTLSError(err error) bool {
	var (
		cve   *tls.CertificateVerificationError
		alert tls.AlertError
		rhe   tls.RecordHeaderError
		ua    x509.UnknownAuthorityError
		he    x509.HostnameError
		ci    x509.CertificateInvalidError
	)
	return errors.As(err, &cve) || errors.As(err, &alert) || errors.As(err, &rhe) ||
		errors.As(err, &ua) || errors.As(err, &he) || errors.As(err, &ci)
}

// replyError is the DeliveryError for an SMTP reply. The enhanced status
// code is split off the text when the server advertised
// ENHANCEDSTATUSCODES (RFC 2034) and it matches the reply's class.
func replyError(code int, msg string, enhanced bool) *postroom.DeliveryError {
	de := &postroom.DeliveryError{Code: code, Permanent: code/100 == 5}
	text := msg
	if enhanced {
		if e, rest, ok := strings.Cut(text, " "); ok && isEnhanced(e, code) {
			de.Enhanced, text = e, rest
		} else if isEnhanced(text, code) {
			de.Enhanced, text = text, ""
		}
	}
	de.Text = oneLine(text)
	return de
}

// isEnhanced reports whether s is class.subject.detail (RFC 3463) of the
// reply code's class.
func isEnhanced(s string, code int) bool {
	parts := strings.Split(s, ".")
	if len(parts) != 3 || len(parts[0]) != 1 || parts[0][0] != byte('0'+code/100) {
		return false
	}
	for _, p := range parts[1:] {
		if len(p) == 0 || len(p) > 3 {
			return false
		}
		for i := 0; i < len(p); i++ {
			if p[i] < '0' || p[i] > '9' {
				return false
			}
		}
	}
	return true
}

// maxReplyText caps DeliveryError.Text.
const maxReplyText = 512

// oneLine makes a reply text one line (a multi-line reply's lines joined
// with spaces, CR and LF removed) of at most maxReplyText bytes of valid
// UTF-8.
func oneLine(s string) string {
	s = strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r == '\r' || r == '\n' }), " ")
	if len(s) > maxReplyText {
		s = s[:maxReplyText]
	}
	return strings.ToValidUTF8(s, "")
}
