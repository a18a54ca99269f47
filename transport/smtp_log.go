package transport

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/postroom/postroom/delivery"
)

// DefaultPoolWaitLogThreshold is the default of
// SMTPOptions.PoolWaitLogThreshold.
const DefaultPoolWaitLogThreshold = time.Second

// The messages of the records SMTP writes (see SMTP for their attributes).
const (
	msgDial       = "smtp dial"
	msgDialFailed = "smtp dial failed"
	msgTLS        = "smtp tls"
	msgAuth       = "smtp auth"
	msgAuthFailed = "smtp auth failed"
	msgRetry      = "smtp retry"
	msgRedial     = "smtp redial"
	msgUnusable   = "smtp unusable"
	msgUsable     = "smtp usable again"
	msgPoolWait   = "smtp pool wait"
	msgSend       = "smtp send"
	msgTrace      = "smtp trace"
)

// smtpLog writes a transport's records. Each method checks that its level
// is enabled before it builds any attribute, so that a silent logger costs
// one interface call per event.
type smtpLog struct {
	l        *slog.Logger // never nil
	addr     string
	slowWait time.Duration // negative: pool waits are never logged
	maxConns int
}

// on and log take the ctx of the Send or dial that caused the record, so
// that a handler can tie it to its request; context.Background when none
// did (the idle timer, the cool-down's gate, the trace).
func (l *smtpLog) on(ctx context.Context, level slog.Level) bool {
	return l.l.Enabled(ctx, level)
}

func (l *smtpLog) log(ctx context.Context, level slog.Level, msg string, attrs ...slog.Attr) {
	l.l.LogAttrs(ctx, level, msg, attrs...)
}

func (l *smtpLog) dialed(ctx context.Context, c *smtpConn, elapsed time.Duration) {
	if l.on(ctx, slog.LevelInfo) {
		l.log(ctx, slog.LevelInfo, msgDial, slog.Uint64("conn", c.id), slog.String("addr", l.addr), slog.Duration("elapsed", elapsed))
	}
}

func (l *smtpLog) dialFailed(ctx context.Context, err error, elapsed time.Duration) {
	if l.on(ctx, slog.LevelWarn) {
		l.log(ctx, slog.LevelWarn, msgDialFailed, slog.String("addr", l.addr), slog.Duration("elapsed", elapsed), slog.String("error", err.Error()))
	}
}

func (l *smtpLog) tls(ctx context.Context, c *smtpConn, st tls.ConnectionState) {
	if !l.on(ctx, slog.LevelInfo) {
		return
	}
	peer := ""
	if len(st.PeerCertificates) > 0 {
		peer = st.PeerCertificates[0].Subject.String()
	}
	l.log(ctx, slog.LevelInfo, msgTLS, slog.Uint64("conn", c.id), slog.String("version", tls.VersionName(st.Version)),
		slog.String("cipher", tls.CipherSuiteName(st.CipherSuite)), slog.String("peer", peer))
}

// auth records AUTH's outcome: err is auth's error. The mechanism is the
// only thing of the exchange it shows.
func (l *smtpLog) auth(ctx context.Context, c *smtpConn, mech AuthMechanism, err error) {
	if err == nil {
		if l.on(ctx, slog.LevelInfo) {
			l.log(ctx, slog.LevelInfo, msgAuth, slog.Uint64("conn", c.id), slog.String("mechanism", string(mech)))
		}
		return
	}
	if !l.on(ctx, slog.LevelWarn) {
		return
	}
	var de *delivery.DeliveryError
	code, enhanced := 0, ""
	if errors.As(err, &de) {
		code, enhanced = de.Code, de.Enhanced
	}
	l.log(ctx, slog.LevelWarn, msgAuthFailed, slog.Uint64("conn", c.id), slog.String("mechanism", string(mech)),
		slog.Int("code", code), slog.String("enhanced", enhanced), slog.String("error", err.Error()))
}

// retry records that attempt (from 2) of env follows delay after err.
func (l *smtpLog) retry(ctx context.Context, env *delivery.Envelope, attempt int, delay time.Duration, err error) {
	if l.on(ctx, slog.LevelWarn) {
		l.log(ctx, slog.LevelWarn, msgRetry, slog.String("send_id", env.SendID), slog.Int("attempt", attempt),
			slog.Duration("delay", delay), slog.Int("code", errCode(err)), slog.String("error", err.Error()))
	}
}

// redial records that c, a pooled connection, was found dead and is
// replaced without counting an attempt.
func (l *smtpLog) redial(ctx context.Context, c *smtpConn, reason error) {
	if l.on(ctx, slog.LevelInfo) {
		l.log(ctx, slog.LevelInfo, msgRedial, slog.Uint64("conn", c.id), slog.String("reason", reason.Error()))
	}
}

// unusable records a session setup refused in a way no retry can fix,
// and the cool-down it starts (none when coolDown is negative).
func (l *smtpLog) unusable(ctx context.Context, se *SetupError, coolDown time.Duration, until time.Time) {
	if !l.on(ctx, slog.LevelError) {
		return
	}
	attrs := []slog.Attr{slog.String("step", se.Step.String()), slog.String("error", se.Error()), slog.Int("code", errCode(se))}
	if coolDown >= 0 {
		attrs = append(attrs, slog.Duration("cool_down", coolDown), slog.Time("until", until))
	}
	l.log(ctx, slog.LevelError, msgUnusable, attrs...)
}

func (l *smtpLog) usable(ctx context.Context) {
	if l.on(ctx, slog.LevelInfo) {
		l.log(ctx, slog.LevelInfo, msgUsable, slog.String("addr", l.addr))
	}
}

// poolWait records a wait for a connection when it took longer than
// SMTPOptions.PoolWaitLogThreshold.
func (l *smtpLog) poolWait(ctx context.Context, waited time.Duration) {
	if l.slowWait >= 0 && waited > l.slowWait && l.on(ctx, slog.LevelInfo) {
		l.log(ctx, slog.LevelInfo, msgPoolWait, slog.Duration("waited", waited), slog.Int("max_conns", l.maxConns))
	}
}

// sent records the outcome of one Send.
func (l *smtpLog) sent(ctx context.Context, env *delivery.Envelope, outcome string, err error, elapsed time.Duration) {
	if l.on(ctx, slog.LevelDebug) {
		l.log(ctx, slog.LevelDebug, msgSend, slog.String("send_id", env.SendID), slog.Int("recipients", len(env.To)),
			slog.Int("bytes", len(env.Data)), slog.String("outcome", outcome), slog.Int("code", errCode(err)), slog.Duration("elapsed", elapsed))
	}
}

// errCode is the reply code err carries, or 0.
func errCode(err error) int {
	var de *delivery.DeliveryError
	if errors.As(err, &de) {
		return de.Code
	}
	return 0
}

// newTracer returns the protocol trace of connection id, or nil when
// l's debug level is off: the trace of a connection is decided when it
// is dialed.
func (l *smtpLog) newTracer(ctx context.Context, id uint64) *tracer {
	if !l.on(ctx, slog.LevelDebug) {
		return nil
	}
	return &tracer{l: l, conn: id}
}

// tracer logs a connection's protocol at debug level, one record per
// line, each way: commands and reply lines as they cross the socket,
// above TLS. It never logs the AUTH exchange (the AUTH line's arguments,
// the client's continuation lines, the server's challenges: secret) or a
// message's text (after DATA up to the final dot, a BDAT chunk: content),
// of which it logs only the size. Its methods are no-ops on a nil
// tracer; a connection's owner calls them, one goroutine at a time.
type tracer struct {
	l    *smtpLog
	conn uint64

	secret  bool
	authCmd bool // the next client line is the AUTH command
	// content is set while a message's text is written: show is how many
	// more lines to show first (BDAT's command), hidden the bytes not
	// shown.
	content bool
	show    int
	hidden  int64

	client, server lineBuf
}

// maxTraceLine caps a traced line; the rest is cut.
const maxTraceLine = 512

// lineBuf gathers a line that comes in pieces.
type lineBuf struct {
	b   []byte
	cut bool // more than maxTraceLine bytes: the rest is dropped
}

// add appends p up to its first LF; it returns the rest after the LF and
// whether the line is complete.
func (lb *lineBuf) add(p []byte) (rest []byte, done bool) {
	i := bytes.IndexByte(p, '\n')
	part := p
	if i >= 0 {
		part, rest = p[:i], p[i+1:]
	}
	if room := maxTraceLine - len(lb.b); len(part) > room {
		part, lb.cut = part[:max(room, 0)], true
	}
	lb.b = append(lb.b, part...)
	return rest, i >= 0
}

// take returns the line (without CR) and empties lb.
func (lb *lineBuf) take() string {
	s := string(bytes.TrimSuffix(lb.b, []byte("\r")))
	if lb.cut {
		s += " [cut]"
	}
	lb.b, lb.cut = lb.b[:0], false
	return strings.ToValidUTF8(s, "?")
}

// wrote traces bytes the client wrote.
func (t *tracer) wrote(p []byte) {
	if t == nil {
		return
	}
	for len(p) > 0 {
		if t.content && t.show == 0 {
			t.hidden += int64(len(p))
			return
		}
		rest, done := t.client.add(p)
		p = rest
		if !done {
			return
		}
		line := t.client.take()
		if t.content {
			t.show--
		}
		switch {
		case t.authCmd:
			line, t.authCmd = redactAuth(line), false
		case t.secret:
			line = redacted
		}
		t.emit("C", line)
	}
}

// read traces bytes the client read.
func (t *tracer) read(p []byte) {
	if t == nil {
		return
	}
	for len(p) > 0 {
		rest, done := t.server.add(p)
		p = rest
		if !done {
			return
		}
		line := t.server.take()
		if t.secret && strings.HasPrefix(line, "334") {
			line = "334 " + redacted
		}
		t.emit("S", line)
	}
}

// redactAuth is the AUTH command as traced: "AUTH" and the mechanism,
// then "[redacted]" for whatever follows (the initial response). The
// continuation lines after it are "[redacted]" whole.
func redactAuth(line string) string {
	f := strings.Fields(line)
	if len(f) == 0 || !strings.EqualFold(f[0], "AUTH") {
		return redacted
	}
	if len(f) <= 2 {
		return strings.Join(f, " ")
	}
	return f[0] + " " + f[1] + " " + redacted
}

func (t *tracer) emit(dir, line string) {
	t.l.log(context.Background(), slog.LevelDebug, msgTrace, slog.Uint64("conn", t.conn), slog.String("dir", dir), slog.String("line", line))
}

// auth starts (on) or ends the AUTH exchange.
func (t *tracer) auth(on bool) {
	if t != nil {
		t.secret, t.authCmd = on, on
	}
}

// beginContent starts a message's text: the next show lines are traced
// (BDAT's command line), the rest is only counted.
func (t *tracer) beginContent(show int) {
	if t != nil {
		t.content, t.show, t.hidden = true, show, 0
	}
}

// endContent ends a message's text and traces its size.
func (t *tracer) endContent() {
	if t == nil || !t.content {
		return
	}
	t.content = false
	t.emit("C", fmt.Sprintf("[message text: %d bytes]", t.hidden))
}

// newConn wraps raw, dialed from start, as the transport's next
// connection, and logs the dial.
func (t *SMTP) newConn(ctx context.Context, raw net.Conn, start time.Time) *smtpConn {
	t.stats.dials.Add(1)
	id := t.conns.Add(1)
	c := newConn(raw, &t.opts, id, wire{written: &t.stats.written, trace: t.log.newTracer(ctx, id)})
	t.log.dialed(ctx, c, time.Since(start))
	return c
}

// dialFailed counts and logs a dial or session setup, started at start,
// that failed with err.
func (t *SMTP) dialFailed(ctx context.Context, err error, start time.Time) {
	t.stats.dialFailures.Add(1)
	t.log.dialFailed(ctx, err, time.Since(start))
}
