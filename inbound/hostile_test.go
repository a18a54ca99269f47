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

// Helpers of the tests of the receiver as an MX on the internet
// (session_test.go, clientconn_test.go, listener_test.go): each hostile
// input of a check of the server (issue §5), sent by a raw client, and
// the limits that answer it.

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

func (l *logRecorder) WithGroup(string) slog.Handler { return l }

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
