package postroom_test

// Reliability under concurrency and over time: one Mailer shared by many
// calls at once against an SMTP server that fails on script, and many calls
// one after another with nothing left behind.

import (
	"encoding/base64"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/testkit/smtptest"
	"github.com/postroom/postroom/transport"
)

// reliabilityFault is the fault script of TestConcurrentCallsFaultMix for
// recipient index i within a call, nil for none; reliabilityWant is the
// result each fault must give. Attempt counts per address, and every
// address is used by one call only, so the mix is the same whatever the
// interleaving.
func reliabilityFault(i int) func(smtptest.Command) smtptest.Fault {
	switch i {
	case 1:
		return smtptest.At(smtptest.When{Stage: smtptest.Rcpt}, smtptest.Fault{Code: 550, Enhanced: "5.1.1", Text: "no such user"})
	case 2:
		return smtptest.At(smtptest.When{Stage: smtptest.Rcpt, FirstAttempt: true}, smtptest.Fault{Code: 451, Enhanced: "4.3.0", Text: "try again"})
	case 3:
		return smtptest.At(smtptest.When{Stage: smtptest.Rcpt}, smtptest.Fault{Code: 452, Enhanced: "4.2.2", Text: "mailbox full"})
	case 4:
		return smtptest.At(smtptest.When{Stage: smtptest.Body, FirstAttempt: true}, smtptest.Fault{Drop: true, AfterBytes: 100})
	case 5:
		return smtptest.At(smtptest.When{Stage: smtptest.EndOfData}, smtptest.Fault{Drop: true})
	case 6:
		return smtptest.At(smtptest.When{Stage: smtptest.EndOfData}, smtptest.Fault{Code: 554, Enhanced: "5.7.1", Text: "spam"})
	}
	return nil
}

// reliabilityWant is the status and reason prefix recipient i must get.
// Recipient 4's connection is cut while the message is being written: the
// client retries it (sent) unless all of it, final dot included, was
// already in the kernel, when it cannot know and must say unknown.
func reliabilityWant(i int) (status []postroom.Status, reason string) {
	switch i {
	case 1:
		return []postroom.Status{postroom.StatusRejected}, "hard-bounce: 550 5.1.1"
	case 3:
		return []postroom.Status{postroom.StatusDeferred}, "soft-bounce: 452 4.2.2"
	case 4:
		return []postroom.Status{postroom.StatusSent, postroom.StatusUnknown}, ""
	case 5:
		return []postroom.Status{postroom.StatusUnknown}, "connection-lost-after-data"
	case 6:
		return []postroom.Status{postroom.StatusRejected}, "hard-bounce: 554 5.7.1"
	}
	return []postroom.Status{postroom.StatusSent}, ""
}

// TestConcurrentCallsFaultMix: 32 calls at once on one Mailer, through
// transport.SMTP to a server that fails some recipients on script (refused,
// refused then accepted, deferred, cut mid-message, cut after the final
// dot, refused after it). Every recipient gets exactly one result, its own,
// and an honest one: the status the fault calls for, and the server's ledger
// agrees (a sent recipient's message was accepted exactly once, a rejected
// or deferred one's never, an unknown one's at most once, and every message
// cut after the dot belongs to an unknown recipient). Run it with -race.
func TestConcurrentCallsFaultMix(t *testing.T) {
	const calls, perCall = 32, 8
	addr := func(c, i int) string { return fmt.Sprintf("c%02d-r%d@example.org", c, i) }
	scripts := map[string]func(smtptest.Command) smtptest.Fault{} // by address
	for c := range calls {
		for i := range perCall {
			if f := reliabilityFault(i); f != nil {
				scripts[addr(c, i)] = f
			}
		}
	}
	srv := smtptest.NewServer(t, smtptest.Options{Faults: func(c smtptest.Command) smtptest.Fault {
		if f, ok := scripts[c.Addr]; ok {
			return f(c)
		}
		return smtptest.Fault{}
	}})
	tr, err := transport.NewSMTP(transport.SMTPOptions{
		Addr: srv.Addr(), TLS: transport.NoTLS, MaxConns: 8,
		Retry: transport.RetryPolicy{Attempts: 2, Base: 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	m, err := postroom.New(tr, postroom.Options{Auth: postroom.NoAuth{}, Concurrency: 4})
	if err != nil {
		t.Fatal(err)
	}

	results := make([][]postroom.Result, calls)
	errs := make([]error, calls)
	var wg sync.WaitGroup
	for c := range calls {
		call := &postroom.Call{Message: postroom.Message{
			FromEmail: "sender@example.com", Subject: "call {{call}}",
			Text: "hello {{name}}\n.\nend", HTML: "<p>hello {{name}}</p>",
		}, GlobalParams: map[string]any{"call": c}}
		for i := range perCall {
			call.Recipients = append(call.Recipients, postroom.Recipient{Email: addr(c, i), Params: map[string]any{"name": i}})
		}
		wg.Go(func() { results[c], errs[c] = m.Send(t.Context(), call) })
	}
	wg.Wait()

	var all []postroom.Result
	for c := range calls {
		if errs[c] != nil {
			t.Errorf("call %d: %v", c, errs[c])
		}
		if len(results[c]) != perCall {
			t.Fatalf("call %d: %d results, want %d", c, len(results[c]), perCall)
		}
		for i, r := range results[c] {
			if r.Email != addr(c, i) {
				t.Errorf("call %d, result %d is for %s, want %s", c, i, r.Email, addr(c, i))
			}
			statuses, reason := reliabilityWant(i)
			if !slices.Contains(statuses, r.Status) || !strings.HasPrefix(r.Reason, reason) {
				t.Errorf("%s: %s %q, want %v %q…", r.Email, r.Status, r.Reason, statuses, reason)
			}
			if (r.SendID == "") != (r.Status == postroom.StatusInvalid) {
				t.Errorf("%s: %s with send id %q", r.Email, r.Status, r.SendID)
			}
		}
		all = append(all, results[c]...)
	}
	smtptest.CheckLedger(t, srv, all)
}

// TestSequentialCallsLeaveNothing: 1,000 calls one after another on one
// Mailer, through transport.SMTP with a 16 KiB attachment, leave the number
// of goroutines and the live heap where a few warm-up calls left them.
// Tolerances are generous (the pool may hold a connection more or less,
// and the server ends a closed connection's goroutine on its own time): a
// goroutine or a message kept per call would be 1,000 goroutines or 40 MB.
// It measures counts, never time.
func TestSequentialCallsLeaveNothing(t *testing.T) {
	const (
		calls           = 1000
		warmUp          = 20
		goroutineSlack  = 16
		heapSlack       = 16 << 20
		attachmentBytes = 16 << 10
		maxConns        = 2
		messagesPerCall = 2
	)
	srv := smtptest.NewServer(t, smtptest.Options{DiscardData: true})
	tr, err := transport.NewSMTP(transport.SMTPOptions{Addr: srv.Addr(), TLS: transport.NoTLS, MaxConns: maxConns})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	m, err := postroom.New(tr, postroom.Options{Auth: postroom.NoAuth{}, Concurrency: maxConns})
	if err != nil {
		t.Fatal(err)
	}
	call := &postroom.Call{Message: postroom.Message{
		FromEmail: "sender@example.com", Subject: "report for {{name}}",
		Text: "hello {{name}}", HTML: "<p>hello {{name}}</p>",
		Attachments: []postroom.Attachment{{Name: "report.pdf", ContentType: "application/pdf", Content: base64.StdEncoding.EncodeToString(make([]byte, attachmentBytes))}},
	}}
	for i := range messagesPerCall {
		call.Recipients = append(call.Recipients, postroom.Recipient{Email: fmt.Sprintf("r%d@example.org", i), Params: map[string]any{"name": i}})
	}
	send := func(n int) {
		for range n {
			results, err := m.Send(t.Context(), call)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range results {
				if r.Status != postroom.StatusSent {
					t.Fatalf("%s: %s %q", r.Email, r.Status, r.Reason)
				}
			}
		}
	}
	settle := func() (goroutines int, heap uint64) {
		// Two collections: sync.Pool keeps its victims through one.
		runtime.GC()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return runtime.NumGoroutine(), ms.HeapAlloc
	}

	send(warmUp)
	g0, h0 := settle()
	send(calls)
	g1, h1 := settle()
	runtime.KeepAlive(m) // what the Mailer holds counts as live
	t.Logf("goroutines %d → %d, heap %d KiB → %d KiB after %d calls", g0, g1, h0>>10, h1>>10, calls)
	if g1 > g0+goroutineSlack {
		t.Errorf("%d goroutines after %d calls, %d after the warm-up", g1, calls, g0)
	}
	if h1 > h0+heapSlack {
		t.Errorf("live heap %d KiB after %d calls, %d KiB after the warm-up", h1>>10, calls, h0>>10)
	}
	if n := len(srv.Messages()); n != (warmUp+calls)*messagesPerCall {
		t.Errorf("the server holds %d messages, want %d", n, (warmUp+calls)*messagesPerCall)
	}
}
