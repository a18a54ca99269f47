package transport_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/testkit/smtptest"
	"github.com/postroom/postroom/transport"
)

// eventually polls cond for up to 5 seconds.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting: %s", what)
		}
	}
}

func TestSMTPPool(t *testing.T) {
	tests := []struct {
		name      string
		opts      transport.SMTPOptions
		parallel  int
		messages  int
		wantConns func(dialed, maxOpen int) error // the client's sockets
	}{
		{
			name: "reuses one connection", opts: transport.SMTPOptions{MaxMessagesPerConn: -1},
			parallel: 1, messages: 20,
			wantConns: func(conns, _ int) error {
				if conns != 1 {
					return fmt.Errorf("%d connections, want 1", conns)
				}
				return nil
			},
		},
		{
			name: "MaxMessagesPerConn", opts: transport.SMTPOptions{MaxMessagesPerConn: 3},
			parallel: 1, messages: 10,
			wantConns: func(conns, _ int) error {
				if conns != 4 {
					return fmt.Errorf("%d connections, want 4 (3+3+3+1)", conns)
				}
				return nil
			},
		},
		{
			name: "never more than MaxConns", opts: transport.SMTPOptions{MaxConns: 3},
			parallel: 16, messages: 64,
			wantConns: func(_, maxOpen int) error {
				if maxOpen > 3 || maxOpen < 1 {
					return fmt.Errorf("%d connections open at once, want 1 to 3", maxOpen)
				}
				return nil
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := smtptest.NewServer(t, smtptest.Options{})
			socks := newSockets()
			opts := tt.opts
			opts.Dial = socks.dial
			tr := newSMTP(t, srv, opts)
			var wg sync.WaitGroup
			sem := make(chan struct{}, tt.parallel)
			for i := range tt.messages {
				sem <- struct{}{}
				wg.Go(func() {
					defer func() { <-sem }()
					if err := tr.Send(t.Context(), envelope(fmt.Sprint(i), rcpt(i))); err != nil {
						t.Errorf("Send %d: %v", i, err)
					}
				})
			}
			wg.Wait()
			if n := len(srv.Messages()); n != tt.messages {
				t.Errorf("server holds %d messages, want %d", n, tt.messages)
			}
			if err := tt.wantConns(socks.counts()); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestSMTPIdleTimeoutCloses(t *testing.T) {
	srv := smtptest.NewServer(t, smtptest.Options{})
	socks := newSockets()
	tr := newSMTP(t, srv, transport.SMTPOptions{Dial: socks.dial, IdleTimeout: 20 * time.Millisecond})
	if err := tr.Send(t.Context(), envelope("a", rcpt(0))); err != nil {
		t.Fatal(err)
	}
	socks.waitOpen(0) // the idle timer closes it
	if err := tr.Send(t.Context(), envelope("b", rcpt(1))); err != nil {
		t.Fatalf("Send after the idle close: %v", err)
	}
	if n, _ := socks.counts(); n != 2 {
		t.Errorf("%d connections, want 2", n)
	}
}

// TestSMTPStaleConnection: the server drops the idle connection (as one
// with a short idle timeout does); the next Send notices before any reply,
// redials and delivers, with retries off.
func TestSMTPStaleConnection(t *testing.T) {
	for _, hc := range []time.Duration{-1, time.Nanosecond} {
		t.Run(fmt.Sprintf("HealthCheckAfter=%v", hc), func(t *testing.T) {
			srv := smtptest.NewServer(t, smtptest.Options{Faults: smtptest.At(smtptest.When{Stage: smtptest.Reset, FirstAttempt: true}, smtptest.Fault{Drop: true})})
			tr := newSMTP(t, srv, transport.SMTPOptions{HealthCheckAfter: hc})
			for i := range 3 {
				if err := tr.Send(t.Context(), envelope(fmt.Sprint(i), rcpt(i))); err != nil {
					t.Fatalf("Send %d: %v", i, err)
				}
			}
			if n := len(srv.Messages()); n != 3 {
				t.Errorf("server holds %d messages, want 3", n)
			}
		})
	}
}

func TestSMTPClose(t *testing.T) {
	reached, release := make(chan struct{}), make(chan struct{})
	srv := smtptest.NewServer(t, smtptest.Options{Faults: func(c smtptest.Command) smtptest.Fault {
		if c.Stage == smtptest.EndOfData && c.Addr == rcpt(0) {
			close(reached)
			<-release
		}
		return smtptest.Fault{}
	}})
	socks := newSockets()
	tr := newSMTP(t, srv, transport.SMTPOptions{Dial: socks.dial})
	if err := tr.Send(t.Context(), envelope("warm", rcpt(9))); err != nil {
		t.Fatal(err)
	}
	sent := make(chan error, 1)
	go func() { sent <- tr.Send(t.Context(), envelope("slow", rcpt(0))) }()
	<-reached // the slow Send waits for its end-of-data reply
	closed := make(chan bool, 1)
	go func() {
		_ = tr.Close()
		// The server records the message before its reply, which the
		// Send in progress waits for; Close must wait for that Send.
		closed <- len(srv.Messages()) == 2
	}()
	close(release)
	if !<-closed {
		t.Fatal("Close returned before the Send in progress finished")
	}
	if err := <-sent; err != nil {
		t.Fatalf("the Send in progress: %v", err)
	}
	socks.waitOpen(0)
	err := tr.Send(t.Context(), envelope("late", rcpt(1)))
	if !errors.Is(err, transport.ErrClosed) || !errors.Is(err, postroom.ErrTransportUnusable) {
		t.Fatalf("Send after Close: %v, want ErrClosed and ErrTransportUnusable", err)
	}
	if err := tr.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

// TestSMTPNoGoroutineLeak sends, cancels mid-command and closes; then no
// goroutine of the transport is left.
func TestSMTPNoGoroutineLeak(t *testing.T) {
	before := runtime.NumGoroutine()
	func() {
		srv := smtptest.NewServer(t, smtptest.Options{Faults: smtptest.At(smtptest.When{Stage: smtptest.Rcpt, Addr: rcpt(1)}, smtptest.Fault{Delay: time.Hour})}) // until the client cuts
		defer srv.Close()
		tr, err := transport.NewSMTP(transport.SMTPOptions{Addr: srv.Addr(), TLS: transport.NoTLS, IdleTimeout: time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		defer tr.Close()
		if err := tr.Send(t.Context(), envelope("a", rcpt(0))); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		defer cancel()
		err = tr.Send(ctx, envelope("b", rcpt(1)))
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Send: %v, want DeadlineExceeded", err)
		}
	}()
	eventually(t, "goroutines to end", func() bool { return runtime.NumGoroutine() <= before })
}

func TestSMTPAuthMechanisms(t *testing.T) {
	for _, mech := range []transport.AuthMechanism{"", transport.AuthPlain, transport.AuthLogin, transport.AuthCRAMMD5, transport.AuthXOAUTH2} {
		t.Run(string(mech), func(t *testing.T) {
			srv := smtptest.NewServer(t, smtptest.Options{TLS: smtptest.TLSImplicit, Users: map[string]string{"user@example.org": "s3cret"}})
			tr := newSMTP(t, srv, transport.SMTPOptions{TLS: transport.ImplicitTLS, TLSConfig: srv.ClientTLSConfig(),
				Username: "user@example.org", Password: "s3cret", Auth: mech})
			if err := tr.Send(t.Context(), envelope("a", rcpt(0))); err != nil {
				t.Fatalf("Send: %v", err)
			}
			if n := len(srv.Messages()); n != 1 {
				t.Fatalf("server holds %d messages, want 1", n)
			}
		})
	}
}

// TestSMTPUTF8 checks that SMTPUTF8 is used only when offered and needed.
func TestSMTPUTF8(t *testing.T) {
	tests := []struct {
		name     string
		offered  bool
		to       string
		wantCode int // 0: delivered
	}{
		{"ascii, not offered", false, "ascii@example.org", 0},
		{"utf8, offered", true, "zoë@example.org", 0},
		{"utf8, not offered", false, "zoë@example.org", 553},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := smtptest.NewServer(t, smtptest.Options{SMTPUTF8: tt.offered})
			tr := newSMTP(t, srv, transport.SMTPOptions{})
			err := tr.Send(t.Context(), envelope("a", tt.to))
			if tt.wantCode == 0 {
				if err != nil {
					t.Fatalf("Send: %v", err)
				}
				return
			}
			de := deliveryError(t, err)
			if de.Kind != postroom.DeliveryPermanent || de.Code != tt.wantCode || len(srv.Messages()) != 0 {
				t.Fatalf("Send: %+v with %d messages on the server, want permanent %d and none", de, len(srv.Messages()), tt.wantCode)
			}
		})
	}
}
