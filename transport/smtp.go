package transport

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"strconv"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/postroom/postroom/delivery"
)

// TLSMode says how SMTP protects a connection with TLS.
type TLSMode int

const (
	// StartTLSOpportunistic upgrades with STARTTLS when the server offers it
	// and goes on in plaintext when it does not. It is the zero value.
	// A failed handshake, such as a certificate that does not verify
	// against SMTPOptions.TLSConfig, is not silently downgraded: it makes
	// the transport unusable.
	StartTLSOpportunistic TLSMode = iota
	// StartTLSRequired upgrades with STARTTLS and refuses a server that does
	// not offer it (port 587 submission).
	StartTLSRequired
	// ImplicitTLS speaks TLS from the first byte (port 465 submissions).
	ImplicitTLS
	// NoTLS never uses TLS, even when the server offers STARTTLS: for a relay
	// on localhost or a trusted network.
	NoTLS
)

var tlsModeNames = [...]string{"StartTLSOpportunistic", "StartTLSRequired", "ImplicitTLS", "NoTLS"}

// String is the mode's name, such as "StartTLSRequired".
func (m TLSMode) String() string {
	if m >= 0 && int(m) < len(tlsModeNames) {
		return tlsModeNames[m]
	}
	return "TLSMode(" + strconv.Itoa(int(m)) + ")"
}

// AuthMechanism names an SMTP AUTH mechanism (RFC 4954).
type AuthMechanism string

// The AUTH mechanisms SMTP supports.
const (
	AuthPlain   AuthMechanism = "PLAIN"
	AuthLogin   AuthMechanism = "LOGIN"
	AuthCRAMMD5 AuthMechanism = "CRAM-MD5"
	AuthXOAUTH2 AuthMechanism = "XOAUTH2"
)

// Defaults of SMTPOptions' zero fields.
const (
	DefaultMaxConns           = 8
	DefaultMaxMessagesPerConn = 100
	DefaultIdleTimeout        = 30 * time.Second
	DefaultHealthCheckAfter   = 5 * time.Second
	DefaultConnectTimeout     = 30 * time.Second
	DefaultCommandTimeout     = 5 * time.Minute
	DefaultDataTimeout        = 5 * time.Minute
	DefaultEndOfDataTimeout   = 10 * time.Minute
	DefaultRetryAttempts      = 3
	DefaultRetryBase          = 250 * time.Millisecond
	DefaultRetryCap           = 10 * time.Second
	DefaultSetupCoolDown      = time.Minute
)

// SMTPOptions configures an SMTP transport. NewSMTP copies it (and clones
// TLSConfig); changing it afterwards has no effect. Each field says what
// its zero value means; NewSMTP refuses a negative number (an
// *option.Error), except where the field says what a negative value means.
type SMTPOptions struct {
	// Addr is the server's host:port, such as "localhost:25" or
	// "smtp.example.com:587". Required. The host is also the name TLS
	// verifies unless TLSConfig.ServerName says otherwise.
	Addr string

	// TLS is how TLS is used. The zero value is StartTLSOpportunistic.
	TLS TLSMode
	// TLSConfig is used for STARTTLS and ImplicitTLS. Nil means a
	// configuration with ServerName set to Addr's host, verifying the
	// certificate against the system roots.
	TLSConfig *tls.Config

	// Username enables AUTH when not empty; Password is its password, or
	// its OAuth 2 access token with AuthXOAUTH2. Empty means no AUTH.
	Username string
	Password string
	// Auth is the mechanism. Empty means the first of PLAIN, LOGIN and
	// CRAM-MD5 that the server offers.
	Auth AuthMechanism
	// AllowInsecureAuth allows AUTH over a connection without TLS. When
	// false (the zero value) credentials are only ever sent under TLS: a
	// plaintext session with Username set fails with ErrInsecureAuth.
	AllowInsecureAuth bool

	// HELOName is the name sent with EHLO (or HELO). Empty means the
	// machine's host name, or "localhost" when it has none.
	HELOName string

	// MaxConns is the most connections open to the server at once; Send
	// waits for one to be free. Zero means DefaultMaxConns (8).
	MaxConns int
	// MaxMessagesPerConn is the most transactions on one connection before
	// it is closed with QUIT and a new one is dialed. Zero means
	// DefaultMaxMessagesPerConn (100); negative means no limit.
	MaxMessagesPerConn int
	// IdleTimeout closes a connection that has been idle this long. Zero
	// means DefaultIdleTimeout (30s).
	IdleTimeout time.Duration
	// HealthCheckAfter makes a connection idle for longer than this pass a
	// NOOP before it is reused. Zero means DefaultHealthCheckAfter (5s);
	// negative means never. (A reused connection that turns out dead before
	// any reply is redialed without counting as a retry either way.)
	HealthCheckAfter time.Duration

	// ConnectTimeout bounds dialing, the TLS handshake and the greeting.
	// Zero means DefaultConnectTimeout (30s).
	ConnectTimeout time.Duration
	// CommandTimeout bounds each command's reply (EHLO, AUTH, MAIL, RCPT,
	// DATA, RSET, NOOP, QUIT). Zero means DefaultCommandTimeout (5 minutes,
	// RFC 5321 §4.5.3.2).
	CommandTimeout time.Duration
	// DataTimeout bounds writing one message's text. Zero means
	// DefaultDataTimeout (5 minutes).
	DataTimeout time.Duration
	// EndOfDataTimeout bounds the wait for the reply after the final dot
	// (or to BDAT LAST), while the server may be filtering or queueing.
	// Zero means DefaultEndOfDataTimeout (10 minutes, RFC 5321
	// §4.5.3.2.6). When it expires the outcome is uncertain: Send reports
	// a DeliveryError of kind DeliveryUncertain.
	EndOfDataTimeout time.Duration

	// DisableChunking makes SMTP send every message with DATA even when
	// the server offers CHUNKING. When false (the zero value) a server
	// that offers CHUNKING gets the message with BDAT (RFC 3030): the
	// bytes as they are, without dot-stuffing, which is cheaper on both
	// sides.
	DisableChunking bool

	// SetupCoolDown is how long Send fails at once with ErrCoolingDown,
	// without contacting the server, after a session setup was refused in
	// a way no retry can fix: AUTH refused (535, any 5xx), a certificate
	// that does not verify, a 5xx greeting or EHLO, STARTTLS or the AUTH
	// mechanism not offered, plaintext injected after the 220 to STARTTLS.
	// Then the next Send tries once, alone, and decides. Check never
	// waits for a cool-down: it always asks the server (one dial, alone),
	// and its success ends the cool-down at once, so that a fixed
	// configuration is confirmed without waiting. Until a setup has succeeded (at first, and after every such
	// refusal) connections are dialed one at a time, so that a wrong
	// password costs one AUTH, not MaxConns: relays lock accounts and
	// fail2ban bans hosts for a burst of failed logins. Zero means
	// DefaultSetupCoolDown (1 minute); negative means no cool-down (every
	// Send tries, still one dial at a time).
	SetupCoolDown time.Duration

	// Retry is the retry policy for temporary failures.
	Retry RetryPolicy

	// RateLimit is the most messages per second (attempts, retries
	// included) this transport starts, with bursts of one. Zero means no
	// limit.
	RateLimit float64

	// Dial opens the TCP connection. Nil means a net.Dialer. It must honour
	// ctx, which carries ConnectTimeout.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)

	// Logging and counters (see SMTPStats for the counters).

	// Logger receives the transport's records (dial, TLS, AUTH outcome,
	// retries, redials, the unusable state, long pool waits; at debug level
	// each Send's outcome and the protocol trace), listed with their
	// attributes in SMTP's documentation. None shows a password, a token, the
	// AUTH exchange or a message's text. Nil discards every record
	// (slog.New(slog.DiscardHandler)), as for every Logger of the module
	// (package option). Whether a connection's protocol is traced is decided
	// when it is dialed, by Logger's debug level then.
	Logger *slog.Logger
	// PoolWaitLogThreshold is how long a Send may wait for a connection
	// (all MaxConns busy) before the wait is logged. Zero means
	// DefaultPoolWaitLogThreshold (1s); negative means never.
	PoolWaitLogThreshold time.Duration
}

// RetryPolicy says how Send retries a temporary failure: a 4xx reply, a
// failed connection, or a connection lost before the final dot (or before
// the whole BDAT LAST chunk was written). Send never
// retries a permanent failure, a partial one (only bcc copies refused), an
// uncertain end of data, or an error wrapping delivery.ErrTransportUnusable.
// The wait before retry n (from 1) is a random duration in
// [0, min(Cap, Base·2^(n-1))] ("full jitter").
type RetryPolicy struct {
	// Attempts is the most tries per message, the first included. Zero means
	// DefaultRetryAttempts (3); 1 means no retry.
	Attempts int
	// Base is the backoff's first ceiling. Zero means DefaultRetryBase.
	Base time.Duration
	// Cap is the backoff's largest ceiling. Zero means DefaultRetryCap.
	Cap time.Duration
}

// Errors of the SMTP transport. Send and Check return them wrapped
// together with delivery.ErrTransportUnusable (in a *SetupError, except
// ErrClosed), so that a Mailer stops the call instead of failing every
// recipient alike; branch on them with errors.Is. ErrSTARTTLSInjection
// and ErrCoolingDown are among them too.
var (
	// ErrClosed: Send was called after Close.
	ErrClosed = errors.New("transport: SMTP transport closed")
	// ErrTLSUnavailable: TLS is StartTLSRequired but the server does not
	// offer STARTTLS.
	ErrTLSUnavailable = errors.New("transport: server does not offer STARTTLS")
	// ErrInsecureAuth: AUTH would send credentials over a connection without
	// TLS and SMTPOptions.AllowInsecureAuth is false.
	ErrInsecureAuth = errors.New("transport: refusing AUTH without TLS")
	// ErrAuthUnavailable: Username is set but the server offers no AUTH, or
	// not the chosen mechanism.
	ErrAuthUnavailable = errors.New("transport: server does not offer the AUTH mechanism")
)

// SMTP is a delivery.Transport that delivers to one SMTP server (a relay, a
// smarthost, a provider's submission port) over a pool of connections.
//
// Connections are dialed lazily (NewSMTP starts nothing), reused with RSET
// between transactions (pipelined when the server offers PIPELINING),
// checked with NOOP after HealthCheckAfter idle, and closed after
// MaxMessagesPerConn transactions, after IdleTimeout idle, after a 421 and
// after any network error. At most MaxConns are open at once.
//
// The message goes with DATA, or, when the server offers CHUNKING (RFC
// 3030; Postfix since 3.4, Exchange and Gmail do) and
// SMTPOptions.DisableChunking is false, as one "BDAT <size> LAST" chunk
// after the RCPT replies were read: a refused recipient stops the
// transaction before any of the message is sent. The reply to BDAT LAST is
// the end-of-data reply, and everything below said of "the final dot"
// holds for it: a connection lost while the chunk is being written is
// temporary, and no reply once all of it was written is Uncertain.
//
// Send is safe for concurrent use; it honours ctx at every step, including
// in the middle of a command (the connection's deadline is moved to the past
// and the connection discarded). It reports failures as the Transport
// contract says:
//
//   - nil: the server accepted the message (250 after the final dot) for
//     every address, even if a later RSET or QUIT fails.
//   - *delivery.PartialError: accepted for Envelope.To[0], refused for the
//     bcc addresses it lists (with their own DeliveryErrors).
//   - *delivery.DeliveryError of kind DeliveryPermanent: a 5xx reply to MAIL, to the
//     RCPT of Envelope.To[0], to DATA, after the final dot or to BDAT; or
//     a message larger than the server's SIZE (552 5.3.4, found before
//     sending it). Nobody got the message.
//   - *delivery.DeliveryError of kind DeliveryUncertain: the final dot was sent and no
//     valid reply came (connection lost, EndOfDataTimeout, ctx done). The
//     server may have the message; it is never retried.
//   - *delivery.DeliveryError of kind DeliveryTemporary: a temporary failure after the retry
//     policy ran out (4xx, with Code; or a network failure before the final
//     dot, without). RCPT 452 and 552 ("too many recipients") are temporary.
//   - an error wrapping delivery.ErrTransportUnusable: no later message can
//     do better. AUTH refused with 535 (or any 5xx), a 5xx greeting or
//     EHLO, STARTTLS required but not offered or refused, plaintext after
//     the 220 to STARTTLS (ErrSTARTTLSInjection), a TLS handshake that
//     fails verification, ErrInsecureAuth, ErrAuthUnavailable, ErrClosed,
//     and ErrCoolingDown during SMTPOptions.SetupCoolDown after one of the
//     refusals of session setup among these. A refused set-up is a
//     *SetupError naming the step; its DeliveryError, of kind
//     DeliveryTemporary (the recipient was not refused), carries the reply,
//     or a Text that says what the server lacks ("relay offers no
//     STARTTLS"). A postroom.Mailer then stops the call: this recipient is
//     deferred with reason transport-unusable (the reply or that Text as
//     detail), so are the recipients not yet handed over, and Mailer.Send
//     returns the results together with the error. SMTP.Check runs the
//     same set-up at start.
//
// A set-up that fails in a way that may pass later (a connection
// refused, a 4xx greeting) is a *SetupError too, without
// ErrTransportUnusable.
//
// DeliveryError.Enhanced is set when the server advertises
// ENHANCEDSTATUSCODES; Text is the reply text on one line, at most 512
// bytes (white space and control characters made single spaces).
//
// Bytes on the wire: CRLF line ends only (bare CR or LF in Envelope.Data
// are made CRLF, and a last line without one gets it), dot-stuffed after
// DATA and sent as they are in a BDAT chunk; MAIL carries SIZE when offered,
// BODY=8BITMIME only when offered and the message has 8-bit bytes,
// SMTPUTF8 only when offered and an address needs it (an address that
// needs it on a server that does not offer it fails with a Permanent
// DeliveryError 553 5.6.7).
//
// What SMTP refuses to send (a Permanent DeliveryError before anything
// goes on the wire): an envelope address with a control byte (NUL, CR, LF,
// TAB, DEL...), '<' or '>'; a message line over 998 octets (RFC 5321
// §4.5.3.1.6, 5.6.0); 8-bit bytes to a server that does not offer 8BITMIME
// (554 5.6.3).
//
// What SMTP does with a server that misbehaves: every reply, from the
// greeting on, is read within bounds (4 KiB a line, 128 lines, 64 KiB in
// all, generous beside RFC 5321 §4.5.3.1.5's 512 octets a line); beyond
// them the connection fails with ErrReplyTooLong. Replies are matched to
// commands: a reply nobody asked for (more bytes after the end-of-data
// reply, or waiting on an idle connection) fails the connection with
// ErrUnexpectedReply; the message whose end-of-data reply it followed is
// Uncertain, never sent. A refused session setup (a wrong password, a
// certificate that does not verify) costs one attempt, then
// SMTPOptions.SetupCoolDown of ErrCoolingDown without contacting the
// server (Check still asks it).
//
// Printing an SMTP or SMTPOptions (fmt, slog, encoding/json) never shows
// the password or token.
//
// SMTP logs to SMTPOptions.Logger (silent when nil) and counts (Stats).
// The records, by message, with their attributes; "conn" numbers a
// connection from 1, in the order dialed:
//
//	INFO   smtp dial          conn, addr, elapsed (the TCP connect)
//	WARN   smtp dial failed   addr, elapsed, error (TCP connect or session setup)
//	INFO   smtp tls           conn, version, cipher, peer (the certificate's subject)
//	INFO   smtp auth          conn, mechanism
//	WARN   smtp auth failed   conn, mechanism, code, enhanced, error
//	WARN   smtp retry         send_id, attempt (the next one), delay, code, error
//	INFO   smtp redial        conn, reason (a pooled connection found dead)
//	ERROR  smtp unusable      step, error, code, cool_down, until
//	INFO   smtp usable again  addr (the first setup after a refusal)
//	INFO   smtp pool wait     waited, max_conns (past PoolWaitLogThreshold)
//	DEBUG  smtp send          send_id, recipients, bytes, outcome (as Stats counts it), code, elapsed
//	DEBUG  smtp trace         conn, dir ("C" or "S"), line
//
// The trace is every command and reply line as it crosses the connection
// (above TLS; envelope addresses included), except that the AUTH exchange
// shows as "AUTH <mechanism> [redacted]", "[redacted]" and "334
// [redacted]", and a message's text (after DATA up to the final dot, a
// BDAT chunk) as "[message text: N bytes]"; a line over 512 bytes is cut.
// No record holds a password, a token or any of a message's text. Records
// are written from the goroutine of the Send, or of the idle timer, that
// caused them, with the Send's ctx (so that a handler can tie them to its
// request); the trace and the unusable state's records with
// context.Background.
//
// SMTP does not resolve MX records, queue, or sign messages: it hands every
// message to one server, which does that. Close it when done.
type SMTP struct {
	opts    SMTPOptions
	host    string
	tlsConf *tls.Config
	limiter *rate.Limiter
	pool    pool
	log     smtpLog
	stats   smtpStats
	conns   atomic.Uint64 // connections dialed, for their ids
}

// NewSMTP validates opts and returns a transport. It dials nothing. It
// refuses, with an *option.Error naming the field, every option set that
// can never work (see SMTPOptions' fields); SMTP.Check then tries what
// only the server can tell.
func NewSMTP(opts SMTPOptions) (*SMTP, error) {
	host, err := opts.validate()
	if err != nil {
		return nil, err
	}
	t := &SMTP{opts: opts, host: host}
	if opts.TLSConfig != nil {
		t.tlsConf = opts.TLSConfig.Clone()
		t.opts.TLSConfig = nil
	} else {
		t.tlsConf = &tls.Config{}
	}
	if t.tlsConf.ServerName == "" {
		t.tlsConf.ServerName = host
	}
	if opts.RateLimit > 0 {
		t.limiter = rate.NewLimiter(rate.Limit(opts.RateLimit), 1)
	}
	t.log = smtpLog{l: opts.Logger, addr: opts.Addr, slowWait: opts.PoolWaitLogThreshold, maxConns: opts.MaxConns}
	t.pool.init(&t.opts, t.dial, &t.log, &t.stats)
	return t, nil
}

// Send delivers env to the server; see SMTP for what its error means. It
// copies nothing from env: the bytes go straight from env.Data to the
// connection before Send returns.
func (t *SMTP) Send(ctx context.Context, env *delivery.Envelope) (err error) {
	defer t.finish(ctx, env, time.Now(), &err)
	if err := t.pool.begin(); err != nil {
		return err
	}
	defer t.pool.end()
	if len(env.To) == 0 {
		return &delivery.DeliveryError{Kind: delivery.DeliveryPermanent, Enhanced: "5.5.1", Text: "envelope has no recipient"}
	}
	if err := checkAddr(env.From, true); err != nil {
		return err
	}
	for _, a := range env.To {
		if err := checkAddr(a, false); err != nil {
			return err
		}
	}
	m, err := newMessage(env.Data)
	if err != nil {
		return err
	}
	for attempt := 1; ; attempt++ {
		if t.limiter != nil {
			if err := t.limiter.Wait(ctx); err != nil {
				return ctxError(ctx, err)
			}
		}
		err := t.attempt(ctx, env, &m)
		if err == nil || !retryable(ctx, err) || attempt >= t.opts.Retry.Attempts {
			return err
		}
		if werr := t.backoff(ctx, env, attempt, err); werr != nil {
			return werr
		}
	}
}

// attempt makes one delivery attempt, redialing without counting when a
// reused connection turns out to be dead before any reply.
func (t *SMTP) attempt(ctx context.Context, env *delivery.Envelope, m *message) error {
	for free := 0; ; free++ {
		c, err := t.pool.get(ctx)
		if err != nil {
			return err
		}
		reused := c.uses > 0
		out := c.transact(ctx, env, m)
		t.pool.put(c, out.keep)
		if out.stale && reused && free < t.opts.MaxConns && ctx.Err() == nil {
			t.stats.redials.Add(1)
			t.log.redial(ctx, c, out.err)
			continue
		}
		return out.err
	}
}

// backoff waits before retry n (from 1) of env, which failed with err,
// or until ctx is done.
func (t *SMTP) backoff(ctx context.Context, env *delivery.Envelope, n int, err error) error {
	ceil := t.opts.Retry.Base << min(n-1, 30)
	if ceil <= 0 || ceil > t.opts.Retry.Cap {
		ceil = t.opts.Retry.Cap
	}
	delay := rand.N(ceil + 1)
	t.stats.retries.Add(1)
	t.log.retry(ctx, env, n+1, delay, err)
	timer := time.NewTimer(delay)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return &delivery.DeliveryError{Err: ctx.Err()}
	}
}

// retryable reports whether err is a temporary failure worth another try.
func retryable(ctx context.Context, err error) bool {
	if ctx.Err() != nil || errors.Is(err, delivery.ErrTransportUnusable) {
		return false
	}
	var pe *delivery.PartialError
	if errors.As(err, &pe) {
		return false
	}
	var de *delivery.DeliveryError
	if errors.As(err, &de) {
		return de.Kind == delivery.DeliveryTemporary
	}
	return true
}

// Close closes the idle connections (with QUIT), waits for the Sends in
// progress to finish and closes their connections. Send after Close fails
// with an error wrapping ErrClosed. Close is safe to call more than once and
// concurrently with Send.
func (t *SMTP) Close() error {
	t.pool.close()
	return nil
}

// checkAddr refuses an address that cannot go into MAIL or RCPT as is: one
// with a control byte (NUL, CR, LF, TAB, DEL...), '<' or '>'. The reverse
// path may be empty (the null sender, "<>").
func checkAddr(a string, reversePath bool) error {
	bad := a == "" && !reversePath
	for i := 0; i < len(a) && !bad; i++ {
		bad = a[i] < ' ' || a[i] == 0x7f || a[i] == '<' || a[i] == '>'
	}
	if bad {
		return &delivery.DeliveryError{Kind: delivery.DeliveryPermanent, Enhanced: "5.1.3", Text: fmt.Sprintf("invalid envelope address %q", a)}
	}
	return nil
}

// ctxError is the error for an operation that failed while ctx was done:
// one wrapping ctx's error, so that callers see canceled or timeout.
func ctxError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return &delivery.DeliveryError{Err: fmt.Errorf("%w (%v)", ctx.Err(), err)}
	}
	return &delivery.DeliveryError{Err: err}
}
