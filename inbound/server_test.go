package inbound_test

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-smtp"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/events"
	"github.com/postroom/postroom/inbound"
	"github.com/postroom/postroom/suppression"
)

const (
	bounceDomain = "bounce.example.com"
	account      = "acct-1"
)

var verp = postroom.VERP{Domain: bounceDomain}

// fixture is a Receiver over a real events.Memory and suppression.Memory,
// serving SMTP (or LMTP) on 127.0.0.1:0 until the test ends.
type fixture struct {
	rec   *inbound.Receiver
	sends *events.Memory
	supp  *suppression.Memory
	addr  string

	mu     sync.Mutex
	events []postroom.Event
}

// fixtureOptions change a fixture's Receiver.
type fixtureOptions struct {
	lmtp  bool
	sends events.Sends // nil: the fixture's Memory
	max   int64
	// sendWait is the Receiver's Options.SendWait; zero means off (a
	// send not recorded is answered at once), not the default.
	sendWait time.Duration
	now      func() time.Time // nil: time.Now
}

func newFixture(t *testing.T, fo fixtureOptions) *fixture {
	t.Helper()
	sends, err := events.NewMemory(events.MemoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{sends: sends, supp: newSuppressions(t)}
	opts := inbound.Options{
		VERP:            verp,
		ReportLocals:    []string{"fbl"},
		Sends:           sends,
		Suppressions:    f.supp,
		MaxMessageBytes: fo.max,
		SendWait:        cmp.Or(fo.sendWait, -1),
		Now:             fo.now,
		Logger:          testLogger(t),
		OnEvent: func(_ context.Context, e postroom.Event) {
			f.mu.Lock()
			f.events = append(f.events, e)
			f.mu.Unlock()
		},
	}
	if fo.sends != nil {
		opts.Sends = fo.sends
	}
	f.rec, err = inbound.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	f.addr = serve(t, f.rec, fo.lmtp)
	return f
}

// testLogger logs to the test's output.
func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), nil))
}

// serve runs rec on 127.0.0.1:0 until the test ends, and checks that
// Serve then returns nil.
func serve(t testing.TB, rec *inbound.Receiver, lmtp bool) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		if lmtp {
			done <- rec.ServeLMTP(ctx, ln)
		} else {
			done <- rec.Serve(ctx, ln)
		}
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("Serve did not return 10 s after its ctx ended")
		}
	})
	return ln.Addr().String()
}

// send records a send of account to email and returns its send id.
func (f *fixture) send(email string) string {
	var b [16]byte
	rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	f.sends.OnEvent(context.Background(), postroom.Event{Type: postroom.EventSend, SendID: id, AccountID: account, Email: email})
	return id
}

// listed returns the reason email is suppressed for, or "".
func (f *fixture) listed(t *testing.T, email string) postroom.ReasonCode {
	t.Helper()
	s, err := f.supp.Suppressed(t.Context(), account, []string{email}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(s) == 0 {
		return ""
	}
	return s[0].Reason
}

func (f *fixture) eventTypes() []postroom.EventType {
	f.mu.Lock()
	defer f.mu.Unlock()
	var ts []postroom.EventType
	for _, e := range f.events {
		ts = append(ts, e.Type)
	}
	return ts
}

// deliver sends msg to rcpts with a null sender over SMTP and returns the
// reply to RCPT (the first refused) or to the end of DATA.
func deliver(t *testing.T, addr string, msg io.Reader, rcpts ...string) error {
	t.Helper()
	c, err := smtp.Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Hello("mta.example.org"); err != nil {
		t.Fatal(err)
	}
	if err := c.Mail("", nil); err != nil {
		t.Fatal(err)
	}
	for _, r := range rcpts {
		if err := c.Rcpt(r, nil); err != nil {
			return err
		}
	}
	w, err := c.Data()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(w, msg); err != nil {
		return err
	}
	err = w.Close()
	c.Quit()
	return err
}

// code is err's SMTP reply code and enhanced code, or 250 for nil.
func code(t *testing.T, err error) (int, smtp.EnhancedCode) {
	t.Helper()
	if err == nil {
		return 250, smtp.EnhancedCode{2, 0, 0}
	}
	var se *smtp.SMTPError
	if !errors.As(err, &se) {
		t.Fatalf("not an SMTP reply: %v", err)
	}
	return se.Code, se.EnhancedCode
}

func TestServer(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	dead := "dead@example.net"
	full := "full@example.net"
	ann := "ann@example.net"
	bob := "bob@example.net"
	deadID, fullID, annID, bobID := f.send(dead), f.send(full), f.send(ann), f.send(bob)

	t.Run("hard bounce lists the dead address", func(t *testing.T) {
		err := deliver(t, f.addr, strings.NewReader(dsn(verp.Address(deadID), "DEAD@example.net", "failed", "5.1.1", "550 5.1.1 <dead@example.net>: Recipient address rejected: User unknown")), verp.Address(deadID))
		if c, _ := code(t, err); c != 250 {
			t.Fatalf("reply %v, want 250", err)
		}
		if r := f.listed(t, dead); r != postroom.ReasonCode("hard-bounce") {
			t.Errorf("%s listed as %q, want hard-bounce", dead, r)
		}
		f.lastEvent(t, postroom.EventHardBounce, dead, deadID)
	})
	t.Run("full mailbox is not hard", func(t *testing.T) {
		err := deliver(t, f.addr, strings.NewReader(dsn(verp.Address(fullID), full, "failed", "4.2.2", "452 4.2.2 <full@example.net>: Mailbox full")), verp.Address(fullID))
		if c, _ := code(t, err); c != 250 {
			t.Fatalf("reply %v, want 250", err)
		}
		if r := f.listed(t, full); r == "hard-bounce" {
			t.Errorf("%s listed as hard-bounce after a full mailbox", full)
		}
		f.lastEvent(t, postroom.EventSoftBounce, full, fullID)
	})
	t.Run("forged bounce naming another address silences no one", func(t *testing.T) {
		// Sent to ann's VERP address (as anyone who got ann's message
		// could), naming bob.
		before := len(f.eventTypes())
		err := deliver(t, f.addr, strings.NewReader(dsn(verp.Address(annID), bob, "failed", "5.1.1", "550 5.1.1 User unknown")), verp.Address(annID))
		if c, _ := code(t, err); c != 250 {
			t.Fatalf("reply %v, want 250", err)
		}
		if r := f.listed(t, bob); r != "" {
			t.Errorf("%s listed as %q by a bounce to ann's address", bob, r)
		}
		if n := len(f.eventTypes()); n != before {
			t.Errorf("a forged bounce emitted %d events", n-before)
		}
		if r := f.listed(t, ann); r != "" {
			t.Errorf("%s listed as %q by a bounce naming bob", ann, r)
		}
		out, err := f.rec.Handle(t.Context(), strings.NewReader(dsn(verp.Address(annID), bob, "failed", "5.1.1", "550 5.1.1 User unknown")), verp.Address(annID))
		if err != nil || out.Verdict != inbound.VerdictOtherRecipient {
			t.Errorf("Handle = %v, %v; want %s", out.Verdict, err, inbound.VerdictOtherRecipient)
		}
	})
	t.Run("unknown send id is asked again and lists no one", func(t *testing.T) {
		// What happens after the grace: TestUnknownSendGrace.
		unknown := strings.Repeat("ab", 16)
		before := len(f.eventTypes())
		for range 2 {
			err := deliver(t, f.addr, strings.NewReader(dsn(verp.Address(unknown), bob, "failed", "5.1.1", "550 5.1.1 User unknown")), verp.Address(unknown))
			if c, e := code(t, err); c != 451 || e != (smtp.EnhancedCode{4, 3, 0}) {
				t.Fatalf("reply %v, want 451 4.3.0", err)
			}
		}
		if r := f.listed(t, bob); r != "" {
			t.Errorf("%s listed as %q by a bounce for an unknown send", bob, r)
		}
		if n := len(f.eventTypes()); n != before {
			t.Errorf("a bounce for an unknown send emitted %d events", n-before)
		}
	})
	t.Run("complaint lists spam", func(t *testing.T) {
		err := deliver(t, f.addr, strings.NewReader(arf(verp.Address(bobID), bob)), verp.Address(bobID))
		if c, _ := code(t, err); c != 250 {
			t.Fatalf("reply %v, want 250", err)
		}
		if r := f.listed(t, bob); r != "spam" {
			t.Errorf("%s listed as %q, want spam", bob, r)
		}
		f.lastEvent(t, postroom.EventSpam, bob, bobID)
	})
	t.Run("auto-reply lists nothing", func(t *testing.T) {
		before := len(f.eventTypes())
		out, err := f.rec.Handle(t.Context(), strings.NewReader(autoReply(verp.Address(annID), ann)), verp.Address(annID))
		if err != nil || out.Verdict != inbound.VerdictNoAction {
			t.Errorf("Handle = %v, %v; want %s", out.Verdict, err, inbound.VerdictNoAction)
		}
		if r := f.listed(t, ann); r != "" {
			t.Errorf("%s listed as %q after an auto-reply", ann, r)
		}
		if after := len(f.eventTypes()); after != before {
			t.Errorf("an auto-reply emitted %d events", after-before)
		}
	})
	t.Run("recipients not ours are refused", func(t *testing.T) {
		for _, tc := range []struct {
			rcpt string
			code int
			enh  smtp.EnhancedCode
		}{
			{"someone@example.org", 550, smtp.EnhancedCode{5, 7, 1}},
			{verp.Address(annID)[:len("bounces+")] + annID + "@example.org", 550, smtp.EnhancedCode{5, 7, 1}},
			{"postmaster@" + bounceDomain, 550, smtp.EnhancedCode{5, 1, 1}},
			{"bounces@" + bounceDomain, 550, smtp.EnhancedCode{5, 1, 1}},
			{"bounces+123@" + bounceDomain, 550, smtp.EnhancedCode{5, 1, 1}},
		} {
			err := deliver(t, f.addr, strings.NewReader(dsn(tc.rcpt, ann, "failed", "5.1.1", "x")), tc.rcpt)
			if c, e := code(t, err); c != tc.code || e != tc.enh {
				t.Errorf("RCPT %s: %v, want %d %v", tc.rcpt, err, tc.code, tc.enh)
			}
		}
		var re *inbound.RecipientError
		if _, err := f.rec.Handle(t.Context(), strings.NewReader("x"), "a@example.org"); !errors.As(err, &re) || !re.OtherDomain {
			t.Errorf("Handle for another domain: %v, want a *RecipientError with OtherDomain", err)
		}
	})
	t.Run("feedback loop address takes the send id from the report", func(t *testing.T) {
		other := "carol@example.net"
		id := f.send(other)
		msg := arf("fbl@"+bounceDomain, other)
		msg = strings.ReplaceAll(msg, "Return-Path: <fbl@"+bounceDomain+">", "Return-Path: <"+verp.Address(id)+">")
		out, err := f.rec.Handle(t.Context(), strings.NewReader(msg), "fbl@"+bounceDomain)
		if err != nil {
			t.Fatal(err)
		}
		// bounce.Parse reads the send id from the returned message's
		// Return-Path.
		switch {
		case out.SendID != id || out.Verdict != inbound.VerdictRecorded:
			t.Errorf("Handle = %+v, want send %s recorded", out, id)
		case f.listed(t, other) != "spam":
			t.Errorf("%s listed as %q, want spam", other, f.listed(t, other))
		}
		// The same send id in a complaint naming someone else acts on no
		// one.
		forged := strings.ReplaceAll(msg, "Original-Rcpt-To: <"+other+">", "Original-Rcpt-To: <dave@example.net>")
		out, err = f.rec.Handle(t.Context(), strings.NewReader(forged), "fbl@"+bounceDomain)
		if err != nil || out.Verdict != inbound.VerdictOtherRecipient || f.listed(t, "dave@example.net") != "" {
			t.Errorf("a complaint naming another address: %s, %v, listed %q", out.Verdict, err, f.listed(t, "dave@example.net"))
		}
	})
}

// lastEvent checks that the last event emitted is of type typ about email
// and the send sendID.
func (f *fixture) lastEvent(t *testing.T, typ postroom.EventType, email, sendID string) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.events) == 0 {
		t.Errorf("no event, want %s", typ)
		return
	}
	e := f.events[len(f.events)-1]
	if e.Type != typ || e.Email != email || e.SendID != sendID || e.AccountID != account {
		t.Errorf("last event %+v, want %s about %s (send %s)", e, typ, email, sendID)
	}
}

// filler reads n octets of message text without holding them: lines of
// 76 'x' and CRLF.
type filler struct{ n, off int64 }

// fillerBlock is 1,024 such lines: the pattern repeats every 78 octets.
var fillerBlock = []byte(strings.Repeat(strings.Repeat("x", 76)+"\r\n", 1024))

func (z *filler) Read(p []byte) (int, error) {
	if z.off >= z.n {
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), z.n-z.off)]
	n := 0
	for n < len(p) {
		n += copy(p[n:], fillerBlock[(z.off+int64(n))%78:])
	}
	z.off += int64(n)
	return n, nil
}

func TestTooLarge(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	ann := "ann@example.net"
	id := f.send(ann)
	head := dsn(verp.Address(id), ann, "failed", "5.1.1", "550 5.1.1 User unknown")
	const size = 30 << 20
	msg := io.MultiReader(strings.NewReader(head), &filler{n: size})

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	err := deliver(t, f.addr, msg, verp.Address(id))
	runtime.ReadMemStats(&after)
	if c, e := code(t, err); c != 552 || e != (smtp.EnhancedCode{5, 3, 4}) {
		t.Fatalf("30 MB message: %v, want 552 5.3.4", err)
	}
	if r := f.listed(t, ann); r != "" {
		t.Errorf("a refused message listed %s as %q", ann, r)
	}
	// Client and server together allocated far less than the message:
	// it was never held whole.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
		t.Errorf("sending and refusing a 30 MB message allocated %d bytes", alloc)
	}
	// Handle refuses it the same way.
	_, err = f.rec.Handle(t.Context(), io.MultiReader(strings.NewReader(head), &filler{n: size}), verp.Address(id))
	if !errors.Is(err, inbound.ErrMessageTooLarge) {
		t.Errorf("Handle of a 30 MB message: %v, want ErrMessageTooLarge", err)
	}
}

func TestLMTP(t *testing.T) {
	f := newFixture(t, fixtureOptions{lmtp: true})
	ann, bob := "ann@example.net", "bob@example.net"
	annID, bobID := f.send(ann), f.send(bob)
	conn, err := net.Dial("tcp", f.addr)
	if err != nil {
		t.Fatal(err)
	}
	c := smtp.NewClientLMTP(conn)
	defer c.Close()
	if err := c.Hello("mta.example.org"); err != nil {
		t.Fatal(err)
	}
	if err := c.Mail("", nil); err != nil {
		t.Fatal(err)
	}
	for _, r := range []string{verp.Address(annID), verp.Address(bobID)} {
		if err := c.Rcpt(r, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Rcpt("x@example.org", nil); err == nil {
		t.Error("RCPT for another domain accepted over LMTP")
	}
	w, err := c.Data()
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(w, dsn(verp.Address(annID), ann, "failed", "5.1.1", "550 5.1.1 User unknown"))
	resps, err := w.CloseWithLMTPResponse()
	if err != nil {
		t.Fatal(err)
	}
	if len(resps) != 2 {
		t.Errorf("%d LMTP replies, want 2", len(resps))
	}
	c.Quit()
	// One message to two VERP addresses: it names ann, so it proves ann's
	// bounce and nothing about bob.
	if r := f.listed(t, ann); r != "hard-bounce" {
		t.Errorf("%s listed as %q, want hard-bounce", ann, r)
	}
	if r := f.listed(t, bob); r != "" {
		t.Errorf("%s listed as %q by a bounce naming ann", bob, r)
	}
}

// failingSends is a Sends whose store is down.
type failingSends struct{}

var errDown = errors.New("store down")

func (failingSends) Lookup(context.Context, string) (events.Send, bool, error) {
	return events.Send{}, false, errDown
}

func TestStoreDownAsksToRetry(t *testing.T) {
	f := newFixture(t, fixtureOptions{sends: failingSends{}})
	id := strings.Repeat("0f", 16)
	err := deliver(t, f.addr, strings.NewReader(dsn(verp.Address(id), "ann@example.net", "failed", "5.1.1", "x")), verp.Address(id))
	if c, e := code(t, err); c != 451 || e != (smtp.EnhancedCode{4, 3, 0}) {
		t.Errorf("reply %v, want 451 4.3.0", err)
	}
	var se *inbound.StoreError
	if _, err := f.rec.Handle(t.Context(), strings.NewReader(dsn(verp.Address(id), "a@example.net", "failed", "5.1.1", "x")), verp.Address(id)); !errors.As(err, &se) || !errors.Is(err, errDown) {
		t.Errorf("Handle: %v, want a *StoreError wrapping the store's", err)
	}
}

func TestServeEndsWithOpenConnections(t *testing.T) {
	sends, _ := events.NewMemory(events.MemoryOptions{})
	rec, err := inbound.New(inbound.Options{VERP: verp, Sends: sends, MaxConnections: 2, MaxConnectionsPerClient: 3, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- rec.Serve(ctx, ln) }()
	// Three idle connections: two served, one waiting for a slot (none has
	// waited a second for its next command: none gives its slot up).
	var conns []net.Conn
	for range 3 {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns = append(conns, c)
	}
	for _, c := range conns[:2] {
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		line := make([]byte, 3)
		if _, err := io.ReadFull(c, line); err != nil || string(line) != "220" {
			t.Fatalf("greeting %q, %v", line, err)
		}
	}
	conns[2].SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	if n, err := conns[2].Read(make([]byte, 1)); n != 0 || err == nil {
		t.Errorf("a third connection was served beyond MaxConnections 2")
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return with idle connections open")
	}
}

func TestNewValidates(t *testing.T) {
	sends, _ := events.NewMemory(events.MemoryOptions{})
	for _, tc := range []struct {
		name  string
		opts  inbound.Options
		field string
	}{
		{"no domain", inbound.Options{Sends: sends}, "VERP.Domain"},
		{"no sends", inbound.Options{VERP: verp}, "Sends"},
		{"negative size", inbound.Options{VERP: verp, Sends: sends, MaxMessageBytes: -1}, "MaxMessageBytes"},
		{"negative timeout", inbound.Options{VERP: verp, Sends: sends, ReadTimeout: -1}, "ReadTimeout"},
		{"bad report local", inbound.Options{VERP: verp, Sends: sends, ReportLocals: []string{"a@b"}}, "ReportLocals"},
		{"negative unknown sends", inbound.Options{VERP: verp, Sends: sends, MaxUnknownSends: -1}, "MaxUnknownSends"},
		{"negative per client", inbound.Options{VERP: verp, Sends: sends, MaxConnectionsPerClient: -1}, "MaxConnectionsPerClient"},
		{"negative stress timeout", inbound.Options{VERP: verp, Sends: sends, StressReadTimeout: -1}, "StressReadTimeout"},
		{"negative session time", inbound.Options{VERP: verp, Sends: sends, MaxSessionTime: -1}, "MaxSessionTime"},
		{"negative junk", inbound.Options{VERP: verp, Sends: sends, MaxJunkCommands: -1}, "MaxJunkCommands"},
		{"negative send waits", inbound.Options{VERP: verp, Sends: sends, MaxSendWaits: -1}, "MaxSendWaits"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := inbound.New(tc.opts)
			var oe *postroom.OptionsError
			if !errors.As(err, &oe) || oe.Op != "inbound.New" || oe.Field != "Options."+tc.field {
				t.Errorf("New: %v, want a *postroom.OptionsError for Options.%s", err, tc.field)
			}
		})
	}
}
