package inbound_test

import (
	"context"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/events"
	"github.com/postroom/postroom/inbound"
	"github.com/postroom/postroom/internal/testkit/postfixtest"
	"github.com/postroom/postroom/internal/testkit/smtptest"
	"github.com/postroom/postroom/transport"
)

// TestPostfixBounces: postroom sends through a real Postfix to a
// destination that refuses some recipients for good (550 5.1.1) and others
// for now (452 4.2.2); Postfix tries once, and its own DSNs come back to
// the Receiver over LMTP through transport_maps, before the sends are
// written (as an events.Recorder writes them, later), and are taken at
// their first delivery (Options.SendWait), never deferred. The dead
// addresses are then listed as hard-bounce, the full mailboxes are not,
// and the next call rejects the dead ones without sending and sends to
// the others.
func TestPostfixBounces(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a Postfix of its own")
	}
	postfixtest.Need(t)
	dead := []string{"gone@example.net", "nobody@example.net"}
	full := []string{"full@example.net", "stuffed@example.net"}
	live := []string{"ann@example.net"}

	var faults []func(smtptest.Command) smtptest.Fault
	for _, a := range dead {
		faults = append(faults, smtptest.At(smtptest.When{Stage: smtptest.Rcpt, Addr: a},
			smtptest.Fault{Code: 550, Enhanced: "5.1.1", Text: "<" + a + ">: Recipient address rejected: User unknown"}))
	}
	for _, a := range full {
		faults = append(faults, smtptest.At(smtptest.When{Stage: smtptest.Rcpt, Addr: a},
			smtptest.Fault{Code: 452, Enhanced: "4.2.2", Text: "<" + a + ">: Mailbox full"}))
	}
	dest := smtptest.NewServer(t, smtptest.Options{Faults: smtptest.Each(faults...)})

	sends, err := events.NewMemory(events.MemoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The Mailer's send events are written as an events.Recorder writes
	// them, later than the hand-over: here, only 300 ms after the
	// Receiver first looked a send up and did not find it, so that every
	// DSN that comes back before that waits for its send.
	late := &lateSends{to: sends}
	watched := &watchedSends{Sends: sends, onMiss: func() {
		time.AfterFunc(300*time.Millisecond, late.write)
	}}
	supp := newSuppressions(t)
	var (
		mu       sync.Mutex
		received []postroom.Event
	)
	rec, err := inbound.New(inbound.Options{
		VERP: verp, Sends: watched, Suppressions: supp, Logger: testLogger(t),
		OnEvent: func(_ context.Context, e postroom.Event) {
			mu.Lock()
			received = append(received, e)
			mu.Unlock()
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	lmtpAddr := serve(t, rec, true)

	pf := postfixtest.Start(t, postfixtest.Options{Transports: map[string]string{
		bounceDomain:  "lmtp:inet:" + lmtpAddr,
		"example.net": "smtp:[" + hostOf(dest.Addr()) + "]:" + portOf(dest.Addr()),
	}})

	tr, err := transport.NewSMTP(transport.SMTPOptions{Addr: pf.Addr, TLS: transport.NoTLS, Retry: transport.RetryPolicy{Attempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	m, err := postroom.New(tr, postroom.Options{
		Auth:         postroom.NoAuth{},
		VERP:         verp,
		Suppressions: supp,
		OnEvent:      late.OnEvent,
	})
	if err != nil {
		t.Fatal(err)
	}
	all := slices.Concat(dead, full, live)
	call := func() *postroom.Call {
		c := &postroom.Call{AccountID: account, Message: postroom.Message{
			FromEmail: "news@shop.example.com", Subject: "News", Text: "Hello.",
		}}
		for _, a := range all {
			c.Recipients = append(c.Recipients, postroom.Recipient{Email: a})
		}
		return c
	}

	// First call: Postfix takes every message.
	results, err := m.Send(t.Context(), call())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		if r.Status != postroom.StatusSent {
			t.Fatalf("first call: %s %s %s, want sent (Postfix takes every message)", r.Email, r.Status, r.Reason)
		}
	}

	// Postfix's DSNs come back: one bounce per dead or full address.
	bounced := func() (hard, soft []string) {
		mu.Lock()
		defer mu.Unlock()
		for _, e := range received {
			switch e.Type {
			case postroom.EventHardBounce:
				hard = append(hard, e.Email)
			case postroom.EventSoftBounce:
				soft = append(soft, e.Email)
			}
		}
		return hard, soft
	}
	if !pf.WaitFor(t.Context(), 90*time.Second, true, func() bool {
		h, s := bounced()
		return len(h)+len(s) >= len(dead)+len(full)
	}) {
		h, s := bounced()
		t.Fatalf("after 90 s the Receiver had hard bounces %v and soft %v, want %v and %v", h, s, dead, full)
	}
	hard, soft := bounced()
	slices.Sort(hard)
	slices.Sort(soft)
	if !slices.Equal(hard, dead) {
		t.Errorf("hard bounces %v, want %v", hard, dead)
	}
	if !slices.Equal(soft, full) {
		t.Errorf("soft bounces %v, want %v", soft, full)
	}
	// Each DSN was taken at its first delivery, though it came before its
	// send was written: Postfix delivered it once (status=sent), never
	// deferred it (a 451 with bounce_queue_lifetime = 0 would have lost
	// it).
	if _, misses, _ := watched.counts(); misses == 0 {
		t.Errorf("every DSN found its send at the first lookup: none came back before its send was written")
	}
	var delivered, deferred int
	for _, line := range strings.Split(pf.Maillog(), "\n") {
		if !strings.Contains(line, "to=<"+postroom.DefaultVERPLocal+"+") {
			continue
		}
		switch {
		case strings.Contains(line, "status=sent"):
			delivered++
			if i := strings.Index(line, "delays="); i >= 0 {
				// before queue / in queue / connection setup /
				// transmission: the last holds the Receiver's wait.
				t.Logf("DSN delivered: %s", strings.Fields(line[i:])[0])
			}
		case strings.Contains(line, "status=deferred"):
			deferred++
			t.Errorf("a DSN was deferred: %s", line)
		}
	}
	if delivered != len(dead)+len(full) || deferred != 0 {
		t.Errorf("Postfix delivered %d DSNs to the Receiver and deferred %d; want %d delivered at the first attempt", delivered, deferred, len(dead)+len(full))
	}
	for _, a := range dead {
		s, err := supp.Suppressed(t.Context(), account, []string{a}, time.Now())
		if err != nil || len(s) != 1 || s[0].Reason != postroom.ReasonHardBounce {
			t.Errorf("%s: suppressed %+v, %v; want hard-bounce", a, s, err)
		}
	}
	for _, a := range slices.Concat(full, live) {
		s, err := supp.Suppressed(t.Context(), account, []string{a}, time.Now())
		if err != nil || len(s) != 0 && s[0].Reason == postroom.ReasonHardBounce {
			t.Errorf("%s: suppressed %+v, %v; want not hard-bounce", a, s, err)
		}
	}

	// Second call to the same recipients: the dead ones are rejected
	// without a transport call, the others sent.
	before := len(dest.Messages())
	results, err = m.Send(t.Context(), call())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		switch {
		case slices.Contains(dead, r.Email):
			if r.Status != postroom.StatusRejected || r.Code != postroom.ReasonHardBounce {
				t.Errorf("second call: %s %s %q, want rejected hard-bounce", r.Email, r.Status, r.Reason)
			}
			if r.SendID != "" {
				t.Errorf("second call: %s has send id %s: a message was made for a listed address", r.Email, r.SendID)
			}
		default:
			if r.Status != postroom.StatusSent {
				t.Errorf("second call: %s %s %q, want sent", r.Email, r.Status, r.Reason)
			}
		}
	}
	// The live address gets its second message; Postfix never offers the
	// dead ones again (the destination's refusals stay one per address).
	if !pf.WaitFor(t.Context(), 60*time.Second, true, func() bool {
		return len(dest.Messages()) >= before+len(live)
	}) {
		t.Fatalf("the destination got %d messages after the second call, want %d", len(dest.Messages())-before, len(live))
	}
}

// hostOf and portOf split a host:port.
func hostOf(addr string) string { h, _, _ := net.SplitHostPort(addr); return h }
func portOf(addr string) string { _, p, _ := net.SplitHostPort(addr); return p }

// lateSends buffers send events and writes them to a Memory only at
// write, as an events.Recorder writes its batch after the hand-over.
type lateSends struct {
	to  *events.Memory
	mu  sync.Mutex
	buf []postroom.Event
}

func (l *lateSends) OnEvent(_ context.Context, e postroom.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, e)
}

func (l *lateSends) write() {
	l.mu.Lock()
	buf := l.buf
	l.buf = nil
	l.mu.Unlock()
	for _, e := range buf {
		l.to.OnEvent(context.Background(), e)
	}
}
