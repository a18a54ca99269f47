package transport

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	gomail "github.com/wneessen/go-mail/smtp"

	"github.com/postroom/postroom/delivery"
	"github.com/postroom/postroom/internal/replytext"
)

// extensions is what the server's EHLO reply offers.
type extensions struct {
	startTLS     bool
	pipelining   bool
	enhanced     bool
	utf8         bool
	eightBitMIME bool
	chunking     bool
	sizeOffered  bool
	maxSize      int64    // SIZE's limit; 0 when none
	auth         []string // AUTH's mechanisms, upper case
}

// parse reads one line of an EHLO reply after the first: a keyword and
// its parameters (RFC 5321 §4.1.1.1).
func (e *extensions) parse(line []byte) {
	kw, params, _ := strings.Cut(string(line), " ")
	switch strings.ToUpper(kw) {
	case "STARTTLS":
		e.startTLS = true
	case "PIPELINING":
		e.pipelining = true
	case "ENHANCEDSTATUSCODES":
		e.enhanced = true
	case "SMTPUTF8":
		e.utf8 = true
	case "8BITMIME":
		e.eightBitMIME = true
	case "CHUNKING":
		e.chunking = true
	case "SIZE":
		e.sizeOffered = true
		e.maxSize, _ = strconv.ParseInt(strings.TrimSpace(params), 10, 64)
	case "AUTH":
		e.auth = strings.Fields(strings.ToUpper(params))
	}
}

// dial opens and sets up a session: TCP, TLS, greeting, EHLO, STARTTLS,
// AUTH. Its errors are *SetupErrors, wrapping ErrTransportUnusable when
// no later attempt can do better.
func (t *SMTP) dial(ctx context.Context) (*smtpConn, error) {
	o := &t.opts
	dctx, cancel := context.WithTimeout(ctx, o.ConnectTimeout)
	start := time.Now()
	raw, err := o.Dial(dctx, "tcp", o.Addr)
	cancel()
	if err != nil {
		se := t.setupFailed(StepDial, ctxError(ctx, fmt.Errorf("dial %s: %w", o.Addr, err)))
		t.dialFailed(ctx, se, start)
		return nil, se
	}
	c := t.newConn(ctx, raw, start)
	stop := context.AfterFunc(ctx, c.abortFn)
	step, err := t.setup(ctx, c)
	if !stop() && err == nil {
		// ctx ended as the set-up's last step did.
		step, err = StepHello, ctxError(ctx, errors.New("session setup"))
		if o.Username != "" {
			step = StepAuth
		}
	}
	if err != nil {
		c.close()
		se := t.setupFailed(step, err)
		t.dialFailed(ctx, se, start)
		return nil, se
	}
	c.deadline(o.CommandTimeout)
	return c, nil
}

// setup runs the session's set-up on c; on failure it says the step and
// its *delivery.DeliveryError.
func (t *SMTP) setup(ctx context.Context, c *smtpConn) (SetupStep, error) {
	o := &t.opts
	c.deadline(o.ConnectTimeout)
	if o.TLS == ImplicitTLS {
		if err := t.handshake(ctx, c, false); err != nil {
			return StepTLSHandshake, err
		}
	}
	code, msg, err := readReply(c.br)
	if err != nil {
		return StepGreeting, ctxError(ctx, fmt.Errorf("greeting: %w", err))
	}
	if code != 220 {
		return StepGreeting, setupRefused(code, msg)
	}
	c.deadline(o.CommandTimeout)
	if err := t.hello(ctx, c); err != nil {
		return StepHello, err
	}
	if o.TLS == StartTLSOpportunistic || o.TLS == StartTLSRequired {
		if step, err := t.startTLS(ctx, c); err != nil {
			return step, err
		}
	}
	c.deadline(o.CommandTimeout)
	if o.Username != "" {
		if err := t.auth(ctx, c); err != nil {
			return StepAuth, err
		}
	}
	c.chunking = c.ext.chunking && !o.DisableChunking
	return 0, nil
}

// hello says EHLO, or HELO to a server that refuses EHLO (RFC 5321
// §4.1.4), and records what the server offers.
func (t *SMTP) hello(ctx context.Context, c *smtpConn) error {
	c.ext = extensions{}
	first := true
	c.bw.WriteString("EHLO ")
	c.bw.WriteString(t.opts.HELOName)
	c.bw.WriteString("\r\n")
	if err := c.flush(); err != nil {
		return ctxError(ctx, fmt.Errorf("EHLO: %w", err))
	}
	code, msg, err := readReplyLines(c.br, func(line []byte) {
		if !first {
			c.ext.parse(line)
		}
		first = false
	})
	switch {
	case err != nil:
		return ctxError(ctx, fmt.Errorf("EHLO: %w", err))
	case code == 250:
		return nil
	case code/100 != 5:
		return setupRefused(code, msg)
	}
	c.ext = extensions{}
	code, msg, err = c.cmd("HELO " + t.opts.HELOName)
	switch {
	case err != nil:
		return ctxError(ctx, fmt.Errorf("HELO: %w", err))
	case code != 250:
		return setupRefused(code, msg)
	}
	return nil
}

// startTLS upgrades the session with STARTTLS when offered. A server that
// refuses the command leaves the session in plaintext, which opportunistic
// TLS accepts (RFC 3207 §4); a failed handshake is never downgraded. On
// failure it says the step: STARTTLS, the handshake, or the EHLO after it.
func (t *SMTP) startTLS(ctx context.Context, c *smtpConn) (SetupStep, error) {
	o := &t.opts
	if !c.ext.startTLS {
		if o.TLS == StartTLSRequired {
			return StepStartTLS, unusable("relay offers no STARTTLS", ErrTLSUnavailable)
		}
		return 0, nil
	}
	c.deadline(o.ConnectTimeout)
	code, msg, err := c.cmd("STARTTLS")
	switch {
	case err != nil:
		return StepStartTLS, ctxError(ctx, fmt.Errorf("STARTTLS: %w", err))
	case code != 220 && o.TLS == StartTLSOpportunistic:
		return 0, nil
	case code != 220:
		return StepStartTLS, setupRefused(code, msg)
	case c.unsolicited():
		// Bytes after the 220 would be read as if they came under TLS.
		// (Those that arrive only once the handshake has begun fail it:
		// see handshake.)
		return StepStartTLS, injected()
	}
	if err := t.handshake(ctx, c, true); err != nil {
		if errors.Is(err, ErrSTARTTLSInjection) {
			return StepStartTLS, err // the reply's step, as when found before
		}
		return StepTLSHandshake, err
	}
	c.deadline(o.CommandTimeout)
	if err := t.hello(ctx, c); err != nil {
		return StepHello, err
	}
	return 0, nil
}

// handshake runs the TLS handshake on c's connection, after STARTTLS or
// (with ImplicitTLS) first, and makes c read and write through TLS.
func (t *SMTP) handshake(ctx context.Context, c *smtpConn, afterSTARTTLS bool) error {
	tc := tls.Client(c.raw, t.tlsConf)
	if err := tc.HandshakeContext(ctx); err != nil {
		return tlsError(ctx, err, afterSTARTTLS)
	}
	c.br.Reset(c.wire.reader(tc))
	c.bw.Reset(c.wire.writer(tc))
	c.tls = true
	t.log.tls(ctx, c, tc.ConnectionState())
	return nil
}

// auth runs AUTH with go-mail's mechanisms (their Start and Next steps)
// over the session's own reader and writer, never over plaintext unless
// AllowInsecureAuth.
func (t *SMTP) auth(ctx context.Context, c *smtpConn) (err error) {
	o := &t.opts
	if !c.tls && !o.AllowInsecureAuth {
		why := "relay offers no STARTTLS, and credentials are only sent under TLS"
		if c.ext.startTLS {
			why = "relay refused STARTTLS, and credentials are only sent under TLS"
		}
		return unusable(why, ErrInsecureAuth)
	}
	mechs := c.ext.auth
	mech := o.Auth
	if mech == "" {
		for _, m := range []AuthMechanism{AuthPlain, AuthLogin, AuthCRAMMD5} {
			if containsFold(mechs, string(m)) {
				mech = m
				break
			}
		}
	}
	if mech == "" || !containsFold(mechs, string(mech)) {
		return unusable(authLacking(o.Auth, mechs), ErrAuthUnavailable)
	}
	c.wire.trace.auth(true)
	defer func() { c.wire.trace.auth(false); t.log.auth(ctx, c, mech, err) }()
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
	proto, resp, err := a.Start(&gomail.ServerInfo{Name: t.host, TLS: c.tls, Auth: mechs})
	if err != nil {
		return ctxError(ctx, fmt.Errorf("AUTH: %w", err))
	}
	line := "AUTH " + proto
	if len(resp) > 0 {
		line += " " + base64.StdEncoding.EncodeToString(resp)
	}
	for round := 0; ; round++ {
		if round == maxAuthRounds {
			return &delivery.DeliveryError{Err: fmt.Errorf("AUTH: %w: more than %d challenges", ErrUnexpectedReply, maxAuthRounds)}
		}
		code, msg, err := c.cmd(line)
		if err != nil {
			return ctxError(ctx, fmt.Errorf("AUTH: %w", err))
		}
		var challenge []byte
		switch code {
		case 235:
		case 334:
			if challenge, err = base64.StdEncoding.DecodeString(msg); err != nil {
				err = fmt.Errorf("AUTH: challenge: %w", err)
			}
		default:
			return setupRefused(code, msg)
		}
		if err == nil {
			resp, err = a.Next(challenge, code == 334)
		}
		if err != nil {
			if code == 334 && proto != string(AuthXOAUTH2) {
				_, _, _ = c.cmd("*") // cancel the exchange (RFC 4954 §4)
			}
			return ctxError(ctx, fmt.Errorf("AUTH: %w", err))
		}
		if code == 235 {
			return nil
		}
		line = base64.StdEncoding.EncodeToString(resp)
	}
}

// maxAuthRounds bounds an AUTH exchange: the mechanisms here take at most
// two challenges.
const maxAuthRounds = 8

// authLacking says for people what a server that offers mechs lacks for
// AUTH with the mechanism want ("" for the first of PLAIN, LOGIN and
// CRAM-MD5).
func authLacking(want AuthMechanism, mechs []string) string {
	offered := replytext.Line(strings.Join(mechs, " "))
	switch {
	case len(mechs) == 0:
		return "relay offers no AUTH"
	case want == "":
		return "relay offers none of AUTH PLAIN, LOGIN and CRAM-MD5 (it offers " + offered + ")"
	}
	return "relay does not offer AUTH " + string(want) + " (it offers " + offered + ")"
}

func containsFold(list []string, s string) bool {
	for _, v := range list {
		if strings.EqualFold(v, s) {
			return true
		}
	}
	return false
}
