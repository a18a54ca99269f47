package transport_test

import (
	"strings"
	"testing"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/testkit/fixture"
	"github.com/postroom/postroom/internal/testkit/smtptest"
	"github.com/postroom/postroom/internal/testkit/workload"
	"github.com/postroom/postroom/transport"
)

// loadFault is the load test's fault mix, by recipient index: 1% RCPT 550,
// 1% RCPT 451 on the first attempt, 0.5% connection dropped mid-DATA on the
// first attempt, 0.1% connection dropped after the final dot.
func loadFault(i int) (smtptest.Stage, smtptest.Fault, want) {
	switch {
	case i%100 == 7:
		return smtptest.Rcpt, smtptest.Fault{Code: 550, Enhanced: "5.1.1", Text: "no such user"}, want{postroom.StatusRejected, "hard-bounce: 550 5.1.1"}
	case i%100 == 13:
		return smtptest.Rcpt, smtptest.Fault{Code: 451, Enhanced: "4.3.0"}, want{postroom.StatusSent, ""}
	case i%200 == 21:
		return smtptest.Body, smtptest.Fault{Drop: true}, want{postroom.StatusSent, ""}
	case i%1000 == 42:
		return smtptest.EndOfData, smtptest.Fault{Drop: true}, want{postroom.StatusUnknown, "connection-lost-after-data"}
	}
	return 0, smtptest.Fault{}, want{postroom.StatusSent, ""}
}

// TestSMTPLoad sends the shared workload through a Mailer and the SMTP
// transport to the test server with the fault mix of loadFault, once with
// DATA and once with BDAT (a server offering CHUNKING): every recipient is
// accounted for as the mix says, none lost, none duplicated, and
// the client never has more than MaxConns sockets open. It sends 25,000
// recipients per mode, 2,500 with -short, and 1,000 under the race
// detector, where the test server's reading of DATA (go-smtp's
// byte-at-a-time dot-unstuffing, instrumented) costs about 20 ms of CPU
// per message of the workload, most of the test's time; 1,000 still has
// every fault of the mix (10 RCPT 550, 10 RCPT 451, 5 drops mid-DATA, 1
// drop after the dot) and keeps the 8 connections busy; 250 under both,
// which still has each fault (3, 3, 2 and 1).
//
// With BDAT the drop "mid-DATA" cuts the connection while the server reads
// the chunk. The client has usually handed the whole chunk (about 140 KB)
// to the kernel by then, and a connection lost after that is Uncertain
// (RFC 3030 gives the client no way to know how much the server read): such
// a recipient is unknown, not retried, and the server must not hold its
// message. Only when the cut comes while the client is still writing is it
// retried, and then sent.
func TestSMTPLoad(t *testing.T) {
	n := 25_000
	switch {
	case raceEnabled && testing.Short():
		n = 250
	case raceEnabled:
		n = 1_000
	case testing.Short():
		n = 2_500
	}
	const maxConns = 8
	addrIndex := make(map[string]int, n)
	for i := range n {
		addrIndex[workload.Address(i)] = i
	}
	call := fixture.Shared(t).Call(n)
	for _, mode := range []struct {
		name     string
		chunking bool
	}{{"data", false}, {"bdat", true}} {
		t.Run(mode.name, func(t *testing.T) {
			srv := smtptest.NewServer(t, smtptest.Options{DiscardData: true, Chunking: mode.chunking, Faults: func(c smtptest.Command) smtptest.Fault {
				i, ok := addrIndex[c.Addr]
				if !ok || c.Attempt != 1 {
					return smtptest.Fault{}
				}
				if stage, f, _ := loadFault(i); stage == c.Stage {
					return f
				}
				return smtptest.Fault{}
			}})
			socks := newSockets()
			tr := newSMTP(t, srv, transport.SMTPOptions{Dial: socks.dial, MaxConns: maxConns, Retry: transport.RetryPolicy{Attempts: 2, Base: time.Millisecond}})
			m, err := postroom.New(tr, postroom.Options{Auth: postroom.NoAuth{}})
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			results, err := m.Send(t.Context(), call)
			if err != nil {
				t.Fatalf("Send: %v", err)
			}
			elapsed := time.Since(start)
			if len(results) != n {
				t.Fatalf("%d results, want %d", len(results), n)
			}
			counts := map[postroom.Status]int{}
			midChunkUnknown := 0
			for i, r := range results {
				counts[r.Status]++
				if r.Email != workload.Address(i) {
					t.Fatalf("result %d is for %s", i, r.Email)
				}
				stage, _, w := loadFault(i)
				// With DATA as with BDAT, the whole message, final dot
				// included, may be in the kernel before the server's cut
				// arrives: the client cannot know, so unknown is honest.
				if stage == smtptest.Body && r.Status == postroom.StatusUnknown {
					w = want{postroom.StatusUnknown, "connection-lost-after-data"}
					midChunkUnknown++
				}
				if r.Status != w.status || !strings.HasPrefix(r.Reason, w.reason) {
					t.Errorf("recipient %d: %s %q, want %s %q…", i, r.Status, r.Reason, w.status, w.reason)
				}
			}
			smtptest.CheckLedger(t, srv, results)
			for _, msg := range srv.Messages() {
				if msg.Chunked != mode.chunking {
					t.Fatalf("message to %s: Chunked %v, want %v", msg.To[0], msg.Chunked, mode.chunking)
				}
			}
			// MaxConns is the client's rule: count the client's sockets. The
			// server learns of a close later, so its count may run over.
			dialed, most := socks.counts()
			if most > maxConns {
				t.Errorf("%d connections open at once, want at most %d", most, maxConns)
			}
			t.Logf("%d recipients in %v (%.0f/s): %v (%d of them unknown after a drop mid-message); %d connections, at most %d at once",
				n, elapsed.Round(time.Millisecond), float64(n)/elapsed.Seconds(), counts, midChunkUnknown, dialed, most)
		})
	}
}
