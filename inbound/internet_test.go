package inbound_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/postroom/postroom/events"
	"github.com/postroom/postroom/inbound"
)

// The tests of the receiver as an MX on the internet: each hostile input
// of a check of the server (issue §5) and the limits that answer it.

// slack is what a bound may be overrun by on a loaded machine: a
// connection "closed within the bound" is closed within bound + slack.
const slack = 5 * time.Second

// logRecorder is an slog.Handler keeping the messages logged, to check
// that nothing panicked and how often a line was logged.
type logRecorder struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (l *logRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (l *logRecorder) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	l.recs = append(l.recs, r.Clone())
	l.mu.Unlock()
	return nil
}
func (l *logRecorder) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logRecorder) WithGroup(string) slog.Handler      { return l }

// count is how many records have msg as their message.
func (l *logRecorder) count(msg string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, r := range l.recs {
		if r.Message == msg {
			n++
		}
	}
	return n
}

// detail is the "detail" attribute of the first record with message msg.
func (l *logRecorder) detail(msg string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range l.recs {
		if r.Message != msg {
			continue
		}
		d := ""
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "detail" {
				d = a.Value.String()
			}
			return true
		})
		return d
	}
	return ""
}

// panics is how many panics go-smtp's server logged.
func (l *logRecorder) panics() int { return l.count("inbound: smtp server: panic serving") }

// hostile is a fixture whose Receiver's options change sets, logging to
// a logRecorder.
type hostile struct {
	*fixture
	log *logRecorder
}

func newHostile(t *testing.T, lmtp bool, change func(*inbound.Options)) *hostile {
	t.Helper()
	sends, err := events.NewMemory(events.MemoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	h := &hostile{fixture: &fixture{sends: sends, supp: newSuppressions(t)}, log: &logRecorder{}}
	opts := inbound.Options{
		VERP:          verp,
		Sends:         sends,
		Suppressions:  h.supp,
		Logger:        slog.New(h.log),
		MaxLogRepeats: -1,
	}
	if change != nil {
		change(&opts)
	}
	h.rec, err = inbound.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	h.addr = serve(t, h.rec, lmtp)
	return h
}

// raw is a client writing raw bytes and reading replies.
type raw struct {
	t *testing.T
	c net.Conn
	r *bufio.Reader
}

// dialRaw connects to addr from the address from ("" for any).
func dialRaw(t *testing.T, addr, from string) *raw {
	t.Helper()
	d := net.Dialer{Timeout: 10 * time.Second}
	if from != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(from)}
	}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &raw{t: t, c: c, r: bufio.NewReader(c)}
}

func (r *raw) write(s string) {
	r.t.Helper()
	if _, err := r.c.Write([]byte(s)); err != nil {
		r.t.Fatalf("writing %q: %v", s, err)
	}
}

// reply reads one reply, waiting at most within; it returns its code and
// its last line, or an error (io.EOF when the server closed).
func (r *raw) reply(within time.Duration) (int, string, error) {
	r.c.SetReadDeadline(time.Now().Add(within))
	for {
		line, err := r.r.ReadString('\n')
		if err != nil {
			return 0, line, err
		}
		if len(line) < 4 {
			return 0, line, fmt.Errorf("short reply line %q", line)
		}
		code, err := strconv.Atoi(line[:3])
		if err != nil {
			return 0, line, fmt.Errorf("reply line %q", line)
		}
		if line[3] == ' ' {
			return code, strings.TrimRight(line, "\r\n"), nil
		}
	}
}

// codes reads replies until the server closes (or within passes) and
// returns their codes.
func (r *raw) codes(within time.Duration) []int {
	var cs []int
	for {
		c, _, err := r.reply(within)
		if err != nil {
			return cs
		}
		cs = append(cs, c)
	}
}

// closedWithin reads until the server closes the connection and says
// whether it did within d; the replies read are returned.
func (r *raw) closedWithin(d time.Duration) (replies []string, ok bool) {
	deadline := time.Now().Add(d)
	r.c.SetReadDeadline(deadline)
	for {
		line, err := r.r.ReadString('\n')
		if line != "" {
			replies = append(replies, strings.TrimRight(line, "\r\n"))
		}
		if err != nil {
			var ne net.Error
			timedOut := errors.As(err, &ne) && ne.Timeout()
			return replies, !timedOut
		}
	}
}

// greeted reads the greeting.
func (r *raw) greeted() {
	r.t.Helper()
	if c, l, err := r.reply(10 * time.Second); err != nil || c != 220 {
		r.t.Fatalf("greeting %d %q, %v", c, l, err)
	}
}

func equalCodes(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestBDATResetRace: the input of §5 (a BDAT chunk, then RSET and a new
// transaction with two recipients, in one write) made go-smtp's BDAT
// goroutine report the new transaction's recipients to the old one (an
// LMTP panic). A BDAT transfer reset, and an empty first chunk (which
// made go-smtp's goroutine panic after QUIT), now end the session
// (go-smtp answers a later transaction with the reset one's result:
// TestBDATTransactionsApart); nothing panics and no one is listed.
func TestBDATResetRace(t *testing.T) {
	for _, lmtp := range []bool{true, false} {
		for _, tc := range []struct {
			chunk string
			last  int // the reply that ends the session
		}{
			{"BDAT 10\r\n0123456789", 421},
			{"BDAT 0\r\n", 500},
		} {
			proto := map[bool]string{true: "LMTP", false: "SMTP"}[lmtp]
			t.Run(fmt.Sprintf("%s/%q", proto, tc.chunk), func(t *testing.T) {
				h := newHostile(t, lmtp, nil)
				a, b, c := h.send("a@example.net"), h.send("b@example.net"), h.send("c@example.net")
				hello := map[bool]string{true: "LHLO", false: "EHLO"}[lmtp]
				input := hello + " mta.example.org\r\nMAIL FROM:<>\r\nRCPT TO:<" + verp.Address(a) + ">\r\n" +
					tc.chunk +
					"RSET\r\nMAIL FROM:<>\r\nRCPT TO:<" + verp.Address(b) + ">\r\nRCPT TO:<" + verp.Address(c) + ">\r\nQUIT\r\n"
				var wg sync.WaitGroup
				for range 8 {
					wg.Go(func() {
						for range 25 {
							r := dialRaw(t, h.addr, "")
							r.write(input)
							if got := r.codes(10 * time.Second); !endedWith(got, 5, tc.last) {
								t.Errorf("replies %v, want 220, at most 4 250, %d", got, tc.last)
								return
							}
							r.c.Close()
						}
					})
				}
				wg.Wait()
				if n := h.log.panics(); n != 0 {
					t.Errorf("%d panics logged; the first:\n%s", n, h.log.detail("inbound: smtp server: panic serving"))
				}
				for _, e := range []string{"a@example.net", "b@example.net", "c@example.net"} {
					if r := h.listed(t, e); r != "" {
						t.Errorf("%s listed as %q", e, r)
					}
				}
			})
		}
	}
}

// endedWith says whether codes are a greeting, at most max-1 replies 250
// (to commands run before the session was ended; the input may come in
// pieces) and last.
func endedWith(codes []int, max, last int) bool {
	n := len(codes)
	if n < 2 || n > max+1 || codes[0] != 220 || codes[n-1] != last {
		return false
	}
	for _, c := range codes[1 : n-1] {
		if c != 250 {
			return false
		}
	}
	return true
}

// TestBDATTransactionsApart: a whole report sent as a first BDAT chunk,
// then RSET and a second transaction with its own report, in one write.
// go-smtp answered the second transaction with the first one's result
// (451: its read was cut by the reset) although it took the second
// message, and its sender would send it again. The session now ends at
// the RSET: neither report is acted on, and the second one, sent again
// in a new session, is.
func TestBDATTransactionsApart(t *testing.T) {
	for _, lmtp := range []bool{true, false} {
		t.Run(map[bool]string{true: "LMTP", false: "SMTP"}[lmtp], func(t *testing.T) {
			h := newHostile(t, lmtp, nil)
			hello := map[bool]string{true: "LHLO", false: "EHLO"}[lmtp]
			for i := range 20 {
				a, b := fmt.Sprintf("a%d@example.net", i), fmt.Sprintf("b%d@example.net", i)
				ida, idb := h.send(a), h.send(b)
				ma := dsn(verp.Address(ida), a, "failed", "5.1.1", "550 5.1.1 User unknown")
				mb := dsn(verp.Address(idb), b, "failed", "5.1.1", "550 5.1.1 User unknown")
				second := "MAIL FROM:<>\r\nRCPT TO:<" + verp.Address(idb) + ">\r\n" +
					fmt.Sprintf("BDAT %d LAST\r\n", len(mb)) + mb + "QUIT\r\n"
				r := dialRaw(t, h.addr, "")
				r.write(hello + " mta.example.org\r\nMAIL FROM:<>\r\nRCPT TO:<" + verp.Address(ida) + ">\r\n" +
					fmt.Sprintf("BDAT %d\r\n", len(ma)) + ma + "RSET\r\n" + second)
				if got := r.codes(10 * time.Second); !endedWith(got, 5, 421) {
					t.Fatalf("replies %v, want 220, at most 4 250, 421", got)
				}
				for _, e := range []string{a, b} {
					if got := h.listed(t, e); got != "" {
						t.Errorf("%s listed as %q by a session ended before its message", e, got)
					}
				}
				r = dialRaw(t, h.addr, "")
				r.write(hello + " mta.example.org\r\n" + second)
				if got, want := r.codes(10*time.Second), []int{220, 250, 250, 250, 250, 221}; !equalCodes(got, want) {
					t.Fatalf("sent again: replies %v, want %v", got, want)
				}
				if got := h.listed(t, b); got != "hard-bounce" {
					t.Errorf("%s listed as %q, want hard-bounce", b, got)
				}
			}
			if n := h.log.panics(); n != 0 {
				t.Errorf("%d panics logged", n)
			}
		})
	}
}

// TestBDATRcptBetweenChunks: RCPT between two BDAT chunks is refused
// (by go-smtp), and the message goes to the recipients given before its
// first chunk, with one reply each.
func TestBDATRcptBetweenChunks(t *testing.T) {
	h := newHostile(t, true, nil)
	a, b := h.send("a@example.net"), h.send("b@example.net")
	msg := dsn(verp.Address(a), "a@example.net", "failed", "5.1.1", "550 5.1.1 User unknown")
	r := dialRaw(t, h.addr, "")
	r.write("LHLO mta.example.org\r\nMAIL FROM:<>\r\nRCPT TO:<" + verp.Address(a) + ">\r\n" +
		"BDAT 10\r\n" + msg[:10] + "RCPT TO:<" + verp.Address(b) + ">\r\n" +
		fmt.Sprintf("BDAT %d LAST\r\n", len(msg)-10) + msg[10:] + "QUIT\r\n")
	want := []int{220, 250, 250, 250, 250, 502, 250, 221}
	if got := r.codes(10 * time.Second); !equalCodes(got, want) {
		t.Errorf("replies %v, want %v", got, want)
	}
	if n := h.log.panics(); n != 0 {
		t.Errorf("%d panics logged; the first:\n%s", n, h.log.detail("inbound: smtp server: panic serving"))
	}
	if got := h.listed(t, "a@example.net"); got != "hard-bounce" {
		t.Errorf("a listed as %q, want hard-bounce", got)
	}
	if got := h.listed(t, "b@example.net"); got != "" {
		t.Errorf("b, refused between chunks, listed as %q", got)
	}
}

// trickle writes s to r one byte every gap, over and over, until stop is
// closed or a write fails; the returned func stops it and waits.
func trickle(r *raw, s string, gap time.Duration) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(gap)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			if _, err := r.c.Write([]byte{s[i%len(s)]}); err != nil {
				return
			}
		}
	})
	return func() { close(done); wg.Wait() }
}

// TestCommandLineBound: a command line that never ends, sent at once or
// trickled, parseable or not, is answered 421 4.4.2 and closed within
// ReadTimeout; the half line is never run (no 501 for "MAIL FROM:<", no
// 250 for "NOOP xxx").
func TestCommandLineBound(t *testing.T) {
	const bound = 500 * time.Millisecond
	h := newHostile(t, false, func(o *inbound.Options) { o.ReadTimeout = bound })
	want := "421 4.4.2 " + bounceDomain + " Error: timeout exceeded"
	for _, tc := range []struct {
		name, line string
		gap        time.Duration // 0: at once
	}{
		{"at once", "MAIL FROM:<", 0},
		{"trickled", "MAIL FROM:<", bound / 5},
		{"parseable trickled", "NOOP xxx", bound / 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := dialRaw(t, h.addr, "")
			r.greeted()
			start := time.Now()
			if tc.gap == 0 {
				r.write(tc.line)
			} else {
				defer trickle(r, tc.line, tc.gap)()
			}
			replies, closed := r.closedWithin(bound + slack)
			if !closed {
				t.Fatalf("still open %v after the line began (bound %v)", time.Since(start), bound)
			}
			if len(replies) != 1 || replies[0] != want {
				t.Errorf("replies %q, want only %q", replies, want)
			}
		})
	}
}

// TestJunkCommands: more than MaxJunkCommands commands that carry no
// mail are answered 421 4.7.0 and the connection closed; a message taken
// starts the count again (Postfix's smtpd_junk_command_limit).
func TestJunkCommands(t *testing.T) {
	h := newHostile(t, false, func(o *inbound.Options) { o.MaxJunkCommands = 5 })
	id := h.send("ann@example.net")
	msg := dsn(verp.Address(id), "ann@example.net", "failed", "5.1.1", "550 5.1.1 User unknown")
	r := dialRaw(t, h.addr, "")
	r.greeted()
	cmd := func(line string, want int) {
		t.Helper()
		r.write(line + "\r\n")
		if c, l, err := r.reply(10 * time.Second); err != nil || c != want {
			t.Fatalf("%s: reply %d %q, %v; want %d", line, c, l, err, want)
		}
	}
	cmd("EHLO mta.example.org", 250) // junk 1, as Postfix counts it
	for range 4 {
		cmd("NOOP", 250)
	}
	cmd("MAIL FROM:<>", 250)
	cmd("RCPT TO:<"+verp.Address(id)+">", 250)
	cmd("DATA", 354)
	cmd(strings.TrimSuffix(msg, "\r\n")+"\r\n.", 250) // taken: the count starts again
	for range 5 {
		cmd("NOOP", 250)
	}
	r.write("NOOP\r\n")
	replies, closed := r.closedWithin(10 * time.Second)
	if want := "421 4.7.0 " + bounceDomain + " Error: too many junk commands"; !closed || len(replies) != 1 || replies[0] != want {
		t.Errorf("after junk: replies %q, closed %v; want %q and closed", replies, closed, want)
	}
}

// TestSessionTime: a client busy with commands that each come in time is
// still answered 421 4.4.2 and closed at MaxSessionTime.
func TestSessionTime(t *testing.T) {
	const bound = time.Second
	h := newHostile(t, false, func(o *inbound.Options) {
		o.MaxSessionTime = bound
		o.MaxJunkCommands = 1 << 20
	})
	r := dialRaw(t, h.addr, "")
	start := time.Now()
	r.greeted()
	defer trickle(r, "NOOP\r\n", 20*time.Millisecond)()
	var last string
	for {
		c, l, err := r.reply(bound + slack)
		if err != nil {
			break
		}
		if c != 250 {
			last = l
		}
	}
	if d := time.Since(start); d > bound+slack {
		t.Errorf("closed after %v, bound %v", d, bound)
	}
	if want := "421 4.4.2 " + bounceDomain + " Error: session time limit exceeded"; last != want {
		t.Errorf("last reply %q, want %q", last, want)
	}
}

// TestIdleConnectionsLeaveRoom: 100 idle connections from one address
// (the default MaxConnections) take half the slots
// (MaxConnectionsPerClient; the rest are refused 421 4.7.0 at once), and
// a bounce from another address is greeted and taken meanwhile.
func TestIdleConnectionsLeaveRoom(t *testing.T) {
	h := newHostile(t, false, nil)
	var greeted, refused int
	for range inbound.DefaultMaxConnections {
		r := dialRaw(t, h.addr, "127.0.0.1")
		c, l, err := r.reply(10 * time.Second)
		switch {
		case err == nil && c == 220:
			greeted++
		case err == nil && l == "421 4.7.0 "+bounceDomain+" Error: too many connections from your address":
			refused++
			if _, closed := r.closedWithin(10 * time.Second); !closed {
				t.Error("a refused connection was left open")
			}
		default:
			t.Fatalf("reply %d %q, %v", c, l, err)
		}
	}
	if want := inbound.DefaultMaxConnections / 2; greeted != want || refused != want {
		t.Errorf("%d greeted, %d refused; want %d each", greeted, refused, want)
	}

	id := h.send("ann@example.net")
	start := time.Now()
	r := dialRaw(t, h.addr, "127.0.0.2")
	r.greeted()
	if d := time.Since(start); d > time.Second+slack {
		t.Errorf("greeted after %v", d)
	}
	r.write("EHLO mta.example.org\r\nMAIL FROM:<>\r\nRCPT TO:<" + verp.Address(id) + ">\r\nDATA\r\n")
	for _, want := range []int{250, 250, 250, 354} {
		if c, l, err := r.reply(10 * time.Second); err != nil || c != want {
			t.Fatalf("reply %d %q, %v; want %d", c, l, err, want)
		}
	}
	r.write(dsn(verp.Address(id), "ann@example.net", "failed", "5.1.1", "550 5.1.1 User unknown") + ".\r\n")
	if c, l, err := r.reply(10 * time.Second); err != nil || c != 250 {
		t.Fatalf("reply to the message %d %q, %v", c, l, err)
	}
	if got := h.listed(t, "ann@example.net"); got != "hard-bounce" {
		t.Errorf("listed as %q, want hard-bounce", got)
	}
}

// TestStressTimeout: when four fifths of MaxConnections are open, the
// idle ones wait StressReadTimeout, not ReadTimeout (Postfix's
// smtpd_timeout = ${stress?{10}:{300}}s), and are closed 421 4.4.2.
func TestStressTimeout(t *testing.T) {
	const stress = 300 * time.Millisecond
	h := newHostile(t, false, func(o *inbound.Options) {
		o.MaxConnections = 10
		o.MaxConnectionsPerClient = 10
		o.ReadTimeout = time.Minute
		o.StressReadTimeout = stress
	})
	var rs []*raw
	for range 7 {
		r := dialRaw(t, h.addr, "")
		r.greeted()
		rs = append(rs, r)
	}
	// Below stress: still open after more than StressReadTimeout.
	time.Sleep(3 * stress)
	for i, r := range rs {
		r.write("NOOP\r\n")
		if c, l, err := r.reply(10 * time.Second); err != nil || c != 250 {
			t.Fatalf("connection %d below stress: reply %d %q, %v", i, c, l, err)
		}
	}
	r := dialRaw(t, h.addr, "")
	r.greeted()
	rs = append(rs, r)
	start := time.Now()
	for i, r := range rs {
		replies, closed := r.closedWithin(stress + slack)
		if !closed {
			t.Fatalf("connection %d open %v into stress", i, time.Since(start))
		}
		if want := "421 4.4.2 " + bounceDomain + " Error: timeout exceeded"; len(replies) != 1 || replies[0] != want {
			t.Errorf("connection %d: replies %q, want %q", i, replies, want)
		}
	}
}

// TestLongLines: a DSN with a line of 5,000 octets sent by DATA or BDAT
// is taken and acted on (Postfix takes such lines); a command line longer than
// 2,048 octets ends the session (Postfix's line_length_limit).
func TestLongLines(t *testing.T) {
	h := newHostile(t, false, nil)
	id := h.send("ann@example.net")
	diag := "550 5.1.1 User unknown " + strings.Repeat("x", 5000)
	err := deliver(t, h.addr, strings.NewReader(dsn(verp.Address(id), "ann@example.net", "failed", "5.1.1", diag)), verp.Address(id))
	if c, _ := code(t, err); c != 250 {
		t.Fatalf("reply %v, want 250", err)
	}
	if got := h.listed(t, "ann@example.net"); got != "hard-bounce" {
		t.Errorf("listed as %q, want hard-bounce", got)
	}

	// The same by BDAT, the chunk sent with its command.
	bob := h.send("bob@example.net")
	msg := dsn(verp.Address(bob), "bob@example.net", "failed", "5.1.1", diag)
	r := dialRaw(t, h.addr, "")
	r.greeted()
	r.write("EHLO mta.example.org\r\nMAIL FROM:<>\r\nRCPT TO:<" + verp.Address(bob) + ">\r\n" +
		fmt.Sprintf("BDAT %d LAST\r\n", len(msg)) + msg)
	for _, want := range []int{250, 250, 250, 250} {
		if c, l, err := r.reply(10 * time.Second); err != nil || c != want {
			t.Fatalf("BDAT: reply %d %q, %v; want %d", c, l, err, want)
		}
	}
	if got := h.listed(t, "bob@example.net"); got != "hard-bounce" {
		t.Errorf("bob listed as %q, want hard-bounce", got)
	}

	r.write("NOOP " + strings.Repeat("x", 2000) + "\r\n")
	if c, l, err := r.reply(10 * time.Second); err != nil || c != 250 {
		t.Fatalf("a 2,007-octet command line: %d %q, %v", c, l, err)
	}
	r.write("NOOP " + strings.Repeat("x", 2100) + "\r\n")
	replies, closed := r.closedWithin(10 * time.Second)
	if want := "500 5.5.2 " + bounceDomain + " Error: command line too long"; !closed || len(replies) != 1 || replies[0] != want {
		t.Errorf("replies %q, closed %v; want %q and closed", replies, closed, want)
	}
}

// TestBDATTimeoutReply: a BDAT chunk cut by the timeout is answered with
// a fixed text, not the socket error (which named both addresses).
func TestBDATTimeoutReply(t *testing.T) {
	h := newHostile(t, false, func(o *inbound.Options) { o.ReadTimeout = 500 * time.Millisecond })
	id := h.send("ann@example.net")
	r := dialRaw(t, h.addr, "")
	r.greeted()
	r.write("EHLO mta.example.org\r\nMAIL FROM:<>\r\nRCPT TO:<" + verp.Address(id) + ">\r\nBDAT 10\r\n12345")
	replies, closed := r.closedWithin(10 * time.Second)
	if !closed {
		t.Fatal("not closed")
	}
	want := "421 4.4.2 " + bounceDomain + " Error: timeout exceeded"
	if n := len(replies); n == 0 || replies[n-1] != want {
		t.Errorf("replies %q, want the last %q", replies, want)
	}
	for _, l := range replies {
		for _, a := range []string{r.c.LocalAddr().String(), r.c.RemoteAddr().String(), "127.0.0.1"} {
			if strings.Contains(l, a) {
				t.Errorf("reply %q names an address", l)
			}
		}
	}
}

// TestLogRepeats: 2,000 reports for unknown send ids log each line a
// few times (MaxLogRepeats), not once per report.
func TestLogRepeats(t *testing.T) {
	log := &logRecorder{}
	sends, _ := events.NewMemory(events.MemoryOptions{})
	rec, err := inbound.New(inbound.Options{VERP: verp, Sends: sends, Logger: slog.New(log), UnknownSendGrace: -1})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2000 {
		id := fmt.Sprintf("%032x", i+1)
		if _, err := rec.Handle(t.Context(), strings.NewReader(dsn(verp.Address(id), "ann@example.net", "failed", "5.1.1", "550 5.1.1 User unknown")), verp.Address(id)); err != nil {
			t.Fatal(err)
		}
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	if len(log.recs) == 0 {
		t.Fatal("nothing logged")
	}
	byMsg := map[string]int{}
	for _, r := range log.recs {
		byMsg[r.Message]++
	}
	for m, n := range byMsg {
		if n > inbound.DefaultMaxLogRepeats {
			t.Errorf("%q logged %d times, want at most %d", m, n, inbound.DefaultMaxLogRepeats)
		}
	}
}

// newHostileTLS is newHostile offering STARTTLS with a certificate
// for 127.0.0.1; it returns the fixture and the client's TLS config.
func newHostileTLS(t *testing.T, lmtp bool, change func(*inbound.Options)) (*hostile, *tls.Config) {
	t.Helper()
	hs := httptest.NewTLSServer(nil)
	cert := hs.TLS.Certificates[0]
	roots := x509.NewCertPool()
	roots.AddCert(hs.Certificate())
	hs.Close()
	h := newHostile(t, lmtp, func(o *inbound.Options) {
		o.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
		if change != nil {
			change(o)
		}
	})
	return h, &tls.Config{RootCAs: roots, ServerName: "127.0.0.1"}
}

// startTLS greets with hello, starts TLS and greets again; it returns the
// encrypted client.
func (r *raw) startTLS(hello string, cfg *tls.Config) *raw {
	r.t.Helper()
	r.greeted()
	r.write(hello + " mta.example.org\r\n")
	if c, l, err := r.reply(10 * time.Second); err != nil || c != 250 {
		r.t.Fatalf("%s: %d %q, %v", hello, c, l, err)
	}
	r.write("STARTTLS\r\n")
	if c, l, err := r.reply(10 * time.Second); err != nil || c != 220 {
		r.t.Fatalf("STARTTLS: %d %q, %v", c, l, err)
	}
	tc := tls.Client(r.c, cfg)
	tc.SetDeadline(time.Now().Add(10 * time.Second))
	if err := tc.Handshake(); err != nil {
		r.t.Fatal(err)
	}
	s := &raw{t: r.t, c: tc, r: bufio.NewReader(tc)}
	s.write(hello + " mta.example.org\r\n")
	if c, l, err := s.reply(10 * time.Second); err != nil || c != 250 {
		r.t.Fatalf("%s under TLS: %d %q, %v", hello, c, l, err)
	}
	return s
}

// TestCommandLineBoundTLS: after STARTTLS a command line that never ends
// is bounded by ReadTimeout too; the session is closed without a reply
// (the half line is not answered).
func TestCommandLineBoundTLS(t *testing.T) {
	const bound = 500 * time.Millisecond
	h, cfg := newHostileTLS(t, false, func(o *inbound.Options) { o.ReadTimeout = bound })
	s := dialRaw(t, h.addr, "").startTLS("EHLO", cfg)
	start := time.Now()
	s.write("MAIL FROM:<")
	replies, closed := s.closedWithin(bound + slack)
	if !closed {
		t.Fatalf("still open %v after the line began (bound %v)", time.Since(start), bound)
	}
	if len(replies) != 0 {
		t.Errorf("replies %q to a half line", replies)
	}
}

// TestBDATResetTLS: after STARTTLS, where the commands cannot be
// followed, a BDAT transfer reset still ends the session (from the
// session's Reset), and the second transaction is not answered with the
// first one's result.
func TestBDATResetTLS(t *testing.T) {
	for _, lmtp := range []bool{true, false} {
		t.Run(map[bool]string{true: "LMTP", false: "SMTP"}[lmtp], func(t *testing.T) {
			h, cfg := newHostileTLS(t, lmtp, nil)
			hello := map[bool]string{true: "LHLO", false: "EHLO"}[lmtp]
			for i := range 10 {
				a, b := fmt.Sprintf("a%d@example.net", i), fmt.Sprintf("b%d@example.net", i)
				ida, idb := h.send(a), h.send(b)
				ma := dsn(verp.Address(ida), a, "failed", "5.1.1", "550 5.1.1 User unknown")
				mb := dsn(verp.Address(idb), b, "failed", "5.1.1", "550 5.1.1 User unknown")
				s := dialRaw(t, h.addr, "").startTLS(hello, cfg)
				s.write("MAIL FROM:<>\r\nRCPT TO:<" + verp.Address(ida) + ">\r\n" +
					fmt.Sprintf("BDAT %d\r\n", len(ma)) + ma + "RSET\r\n" +
					"MAIL FROM:<>\r\nRCPT TO:<" + verp.Address(idb) + ">\r\n" +
					fmt.Sprintf("BDAT %d LAST\r\n", len(mb)) + mb + "QUIT\r\n")
				got := s.codes(10 * time.Second)
				for i, c := range got {
					if c != 250 || i > 2 {
						t.Fatalf("replies %v, want at most MAIL's, RCPT's and the chunk's 250 before the end", got)
					}
				}
				if got := h.listed(t, a); got != "" {
					t.Errorf("%s, whose message never ended, listed as %q", a, got)
				}
			}
			if n := h.log.panics(); n != 0 {
				t.Errorf("%d panics logged", n)
			}
		})
	}
}
