package inbound_test

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-smtp"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/events"
	"github.com/postroom/postroom/inbound"
)

// newSendID returns a send id that no store has recorded.
func newSendID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// record records a send of account to email with send id id, as the
// Mailer's send event does when its batch is written.
func (f *fixture) record(id, email string) {
	f.sends.OnEvent(context.Background(), postroom.Event{Type: postroom.EventSend, SendID: id, AccountID: account, Email: email})
}

// TestUnknownSendRetried: a bounce that arrives before its send is
// recorded is answered 451 by the real server, so that the sending server
// offers it again; the retry, once the send is recorded, is taken and
// lists the address. Over SMTP, and over LMTP with a reply per recipient.
func TestUnknownSendRetried(t *testing.T) {
	t.Run("SMTP", func(t *testing.T) {
		f := newFixture(t, fixtureOptions{})
		dead := "dead@example.net"
		id := newSendID()
		msg := dsn(verp.Address(id), dead, "failed", "5.1.1", "550 5.1.1 <dead@example.net>: User unknown")
		err := deliver(t, f.addr, strings.NewReader(msg), verp.Address(id))
		if c, e := code(t, err); c != 451 || e != (smtp.EnhancedCode{4, 3, 0}) {
			t.Fatalf("first attempt: %v, want 451 4.3.0", err)
		}
		if r := f.listed(t, dead); r != "" || len(f.eventTypes()) != 0 {
			t.Fatalf("first attempt listed %q, emitted %v; want nothing", r, f.eventTypes())
		}
		f.record(id, dead) // the Recorder's batch is written
		err = deliver(t, f.addr, strings.NewReader(msg), verp.Address(id))
		if c, _ := code(t, err); c != 250 {
			t.Fatalf("retry: %v, want 250", err)
		}
		if r := f.listed(t, dead); r != "hard-bounce" {
			t.Errorf("after the retry %s listed as %q, want hard-bounce", dead, r)
		}
		f.lastEvent(t, postroom.EventHardBounce, dead, id)
	})
	t.Run("SMTP, two recipients", func(t *testing.T) {
		// One reply answers both over SMTP: while one recipient's send is
		// not recorded, nothing is recorded for the other either, so that
		// the retry records it once.
		f := newFixture(t, fixtureOptions{})
		ann, bob := "ann@example.net", "bob@example.net"
		known, unknown := f.send(ann), newSendID()
		msg := dsn(verp.Address(known), ann, "failed", "4.2.2", "452 4.2.2 Mailbox full")
		err := deliver(t, f.addr, strings.NewReader(msg), verp.Address(known), verp.Address(unknown))
		if c, e := code(t, err); c != 451 || e != (smtp.EnhancedCode{4, 3, 0}) {
			t.Fatalf("first attempt: %v, want 451 4.3.0", err)
		}
		if ts := f.eventTypes(); len(ts) != 0 {
			t.Fatalf("first attempt emitted %v; want nothing until the retry", ts)
		}
		f.record(unknown, bob)
		err = deliver(t, f.addr, strings.NewReader(msg), verp.Address(known), verp.Address(unknown))
		if c, _ := code(t, err); c != 250 {
			t.Fatalf("retry: %v, want 250", err)
		}
		if ts := f.eventTypes(); len(ts) != 1 || ts[0] != postroom.EventSoftBounce {
			t.Errorf("events %v; want ann's one soft_bounce", ts)
		}
		f.lastEvent(t, postroom.EventSoftBounce, ann, known)
	})
	t.Run("LMTP", func(t *testing.T) {
		f := newFixture(t, fixtureOptions{lmtp: true})
		ann := "ann@example.net"
		known, unknown := f.send(ann), newSendID()
		// One DSN naming ann to both addresses: proven for the recorded
		// send; the other recipient's reply asks for it again.
		msg := dsn(verp.Address(known), ann, "failed", "5.1.1", "550 5.1.1 User unknown")
		errs := deliverLMTP(t, f.addr, msg, verp.Address(known), verp.Address(unknown))
		if errs[0] != nil {
			t.Errorf("recorded send's reply: %v, want 250", errs[0])
		}
		if c, e := code(t, errs[1]); c != 451 || e != (smtp.EnhancedCode{4, 3, 0}) {
			t.Errorf("unknown send's reply: %v, want 451 4.3.0", errs[1])
		}
		if r := f.listed(t, ann); r != "hard-bounce" {
			t.Errorf("%s listed as %q, want hard-bounce", ann, r)
		}
		// The unknown send is recorded, to bob: the retry to its address
		// is taken, and, naming ann, acts on no one.
		bob := "bob@example.net"
		f.record(unknown, bob)
		if errs := deliverLMTP(t, f.addr, msg, verp.Address(unknown)); errs[0] != nil {
			t.Errorf("retry: %v, want 250", errs[0])
		}
		if r := f.listed(t, bob); r != "" {
			t.Errorf("%s listed as %q by a bounce naming ann", bob, r)
		}
	})
}

// deliverLMTP sends msg to rcpts over LMTP and returns each recipient's
// reply to DATA: nil for 250.
func deliverLMTP(t *testing.T, addr, msg string, rcpts ...string) []error {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
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
	for _, r := range rcpts {
		if err := c.Rcpt(r, nil); err != nil {
			t.Fatal(err)
		}
	}
	w, err := c.Data()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(w, msg); err != nil {
		t.Fatal(err)
	}
	_, err = w.CloseWithLMTPResponse()
	var lerr smtp.LMTPDataError
	if err != nil && !errors.As(err, &lerr) {
		t.Fatal(err)
	}
	c.Quit()
	errs := make([]error, len(rcpts))
	for i, r := range rcpts {
		if e, ok := lerr[r]; ok {
			errs[i] = e
		}
	}
	return errs
}

// TestUnknownSendGrace: Handle asks again for a report about an unknown
// send id for UnknownSendGrace after it first saw the id, on
// Options.Now's clock, then drops it; never for a message that proves
// nothing; never with the grace off; and a full memory forgets the id
// seen first, which is then given the grace anew.
func TestUnknownSendGrace(t *testing.T) {
	const grace = 10 * time.Minute
	t0 := time.Date(2026, 11, 28, 8, 0, 0, 0, time.UTC)
	type step struct {
		after   time.Duration // since t0
		id      string
		msg     func(rcpt string) string
		verdict inbound.Verdict
	}
	a, b := newSendID(), newSendID()
	bounceOf := func(rcpt string) string {
		return dsn(rcpt, "ann@example.net", "failed", "5.1.1", "550 5.1.1 User unknown")
	}
	complaint := func(rcpt string) string { return arf(rcpt, "ann@example.net") }
	reply := func(rcpt string) string { return autoReply(rcpt, "ann@example.net") }
	for _, tc := range []struct {
		name  string
		opts  inbound.Options
		steps []step
	}{
		{"default grace", inbound.Options{}, []step{
			{0, a, bounceOf, inbound.VerdictRetryLater},
			{grace - time.Second, a, bounceOf, inbound.VerdictRetryLater},
			{grace, a, bounceOf, inbound.VerdictUnknownSend},
			{2 * grace, a, complaint, inbound.VerdictUnknownSend},
			{2 * grace, b, complaint, inbound.VerdictRetryLater},
		}},
		{"an auto-reply is never asked again", inbound.Options{}, []step{
			{0, a, reply, inbound.VerdictUnknownSend},
			{0, a, bounceOf, inbound.VerdictRetryLater},
		}},
		{"a shorter grace", inbound.Options{UnknownSendGrace: time.Minute}, []step{
			{0, a, bounceOf, inbound.VerdictRetryLater},
			{time.Minute, a, bounceOf, inbound.VerdictUnknownSend},
		}},
		{"off", inbound.Options{UnknownSendGrace: -1}, []step{
			{0, a, bounceOf, inbound.VerdictUnknownSend},
		}},
		{"full memory", inbound.Options{MaxUnknownSends: 1}, []step{
			{0, a, bounceOf, inbound.VerdictRetryLater},
			{0, b, bounceOf, inbound.VerdictRetryLater}, // a is forgotten
			{grace, b, bounceOf, inbound.VerdictUnknownSend},
			{grace, a, bounceOf, inbound.VerdictRetryLater}, // seen anew
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sends, err := events.NewMemory(events.MemoryOptions{})
			if err != nil {
				t.Fatal(err)
			}
			now := t0
			opts := tc.opts
			opts.VERP, opts.Sends, opts.Logger = verp, sends, testLogger(t)
			opts.SendWait = cmp.Or(opts.SendWait, -1) // TestSendWait waits
			opts.Now = func() time.Time { return now }
			rec, err := inbound.New(opts)
			if err != nil {
				t.Fatal(err)
			}
			for i, s := range tc.steps {
				now = t0.Add(s.after)
				out, err := rec.Handle(t.Context(), strings.NewReader(s.msg(verp.Address(s.id))), verp.Address(s.id))
				if err != nil || out.Verdict != s.verdict || out.SendID != s.id || len(out.Events) != 0 || len(out.Listed) != 0 {
					t.Errorf("step %d (%v): %s, %v, events %v, listed %v; want %s and nothing recorded", i, s.after, out.Verdict, err, out.Events, out.Listed, s.verdict)
				}
			}
		})
	}
}
