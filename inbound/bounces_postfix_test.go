package inbound_test

import (
	"context"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/events"
	"github.com/postroom/postroom/inbound"
	"github.com/postroom/postroom/internal/smtptest"
	"github.com/postroom/postroom/transport"
)

// TestPostfixBounces: postroom sends through a real Postfix to a
// destination that refuses some recipients for good (550 5.1.1) and others
// for now (452 4.2.2); Postfix tries once, and its own DSNs come back to
// the Receiver over LMTP through transport_maps. The dead addresses are
// then listed as hard-bounce, the full mailboxes are not, and the next
// call rejects the dead ones without sending and sends to the others.
func TestPostfixBounces(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a Postfix of its own")
	}
	needPostfix(t)
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
	supp := newSuppressions(t)
	var (
		mu       sync.Mutex
		received []postroom.Event
	)
	rec, err := inbound.New(inbound.Options{
		VERP: verp, Sends: sends, Suppressions: supp, Logger: testLogger(t),
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

	pf := startPostfix(t, map[string]string{
		bounceDomain:  "lmtp:inet:" + lmtpAddr,
		"example.net": "smtp:[" + hostOf(dest.Addr()) + "]:" + portOf(dest.Addr()),
	})

	tr, err := transport.NewSMTP(transport.SMTPOptions{Addr: pf.addr, TLS: transport.NoTLS, Retry: transport.RetryPolicy{Attempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	m, err := postroom.New(tr, postroom.Options{
		Auth:         postroom.NoAuth{},
		VERP:         verp,
		Suppressions: supp,
		OnEvent:      sends.OnEvent,
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
	if !waitFor(t.Context(), pf, 90*time.Second, func() bool {
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
	if !waitFor(t.Context(), pf, 60*time.Second, func() bool {
		return len(dest.Messages()) >= before+len(live)
	}) {
		t.Fatalf("the destination got %d messages after the second call, want %d", len(dest.Messages())-before, len(live))
	}
}

// hostOf and portOf split a host:port.
func hostOf(addr string) string { h, _, _ := net.SplitHostPort(addr); return h }
func portOf(addr string) string { _, p, _ := net.SplitHostPort(addr); return p }
