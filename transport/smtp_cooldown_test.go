package transport_test

import (
	"crypto/tls"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/testkit/smtptest"
	"github.com/postroom/postroom/transport"
)

// fakeClock is a clock the test moves by hand.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// TestSMTPAuthRefusedCoolDown: a relay refuses the login with 535. Three
// calls of 20 recipients with concurrency 8 cost one AUTH, not one per
// connection: the first call's probe is refused, the others fail at once
// with ErrCoolingDown. After the cool-down one probe decides: refused
// again, one more AUTH; accepted, the transport delivers again.
func TestSMTPAuthRefusedCoolDown(t *testing.T) {
	var auths atomic.Int32
	var refuse atomic.Bool
	refuse.Store(true)
	srv := smtptest.NewServer(t, smtptest.Options{Users: map[string]string{"u": "p"}, Faults: func(c smtptest.Command) smtptest.Fault {
		if c.Stage != smtptest.Auth {
			return smtptest.Fault{}
		}
		auths.Add(1)
		if refuse.Load() {
			return smtptest.Fault{Code: 535, Enhanced: "5.7.8", Text: "authentication failed"}
		}
		return smtptest.Fault{}
	}})
	const coolDown = 10 * time.Minute
	clock := &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	tr := newSMTP(t, srv, transport.SMTPOptions{Username: "u", Password: "p", AllowInsecureAuth: true, SetupCoolDown: coolDown})
	transport.SetClock(tr, clock.Now)
	m, err := postroom.New(tr, postroom.Options{Auth: postroom.NoAuth{}, Concurrency: 8})
	if err != nil {
		t.Fatal(err)
	}
	call := func(wantErr ...error) []postroom.Result {
		t.Helper()
		results, err := m.Send(t.Context(), newCall(20, ""))
		for _, w := range wantErr {
			if !errors.Is(err, w) {
				t.Fatalf("Send: %v, want %v", err, w)
			}
		}
		if len(wantErr) == 0 && err != nil {
			t.Fatalf("Send: %v", err)
		}
		return results
	}
	call(postroom.ErrTransportUnusable)
	if n := auths.Load(); n != 1 {
		t.Fatalf("%d AUTH attempts in the first call, want 1", n)
	}
	for range 2 {
		call(postroom.ErrTransportUnusable, transport.ErrCoolingDown)
	}
	if n := auths.Load(); n != 1 {
		t.Fatalf("%d AUTH attempts after three calls, want 1", n)
	}

	clock.advance(coolDown - time.Second)
	call(transport.ErrCoolingDown)
	clock.advance(time.Second)
	results := call(postroom.ErrTransportUnusable)
	if n := auths.Load(); n != 2 {
		t.Fatalf("%d AUTH attempts after the cool-down's probe, want 2", n)
	}
	if errors.Is(tr.Send(t.Context(), envelope("x", rcpt(0))), transport.ErrCoolingDown) == false {
		t.Fatal("the probe's refusal started no new cool-down")
	}
	smtptest.CheckLedger(t, srv, results)

	refuse.Store(false)
	clock.advance(coolDown)
	checkResults(t, call(), []want{{postroom.StatusSent, ""}})
	if n := auths.Load(); n < 3 {
		t.Fatalf("%d AUTH attempts, want a new login", n)
	}
}

// TestSMTPCertificateCoolDown: a certificate that does not verify costs
// one connection per cool-down, however many Sends run at once.
func TestSMTPCertificateCoolDown(t *testing.T) {
	srv := smtptest.NewServer(t, smtptest.Options{TLS: smtptest.TLSStartTLS})
	socks := newSockets()
	tr := newSMTP(t, srv, transport.SMTPOptions{TLS: transport.StartTLSRequired, TLSConfig: &tls.Config{}, Dial: socks.dial})
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			if err := tr.Send(t.Context(), envelope("a", rcpt(i))); !errors.Is(err, postroom.ErrTransportUnusable) {
				t.Errorf("Send %d: %v, want ErrTransportUnusable", i, err)
			}
		})
	}
	wg.Wait()
	if n, _ := socks.counts(); n != 1 {
		t.Fatalf("%d connections, want 1", n)
	}
}
