package transport_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/testkit/smtptest"
	"github.com/postroom/postroom/transport"
)

// TestSMTPStartTLSInjection: a server (or a man in the middle) that
// answers STARTTLS with 220 followed by plaintext reply lines, which a
// careless client reads as if they came under TLS (the STARTTLS
// injection of CVE-2011-0411, on the reply side), is a refused set-up
// like a certificate that does not verify: the call stops with
// ErrTransportUnusable, every recipient says transport-unusable, the
// cool-down keeps the next Send from dialing, no credential is sent, and
// the log's unusable record names the attack.
func TestSMTPStartTLSInjection(t *testing.T) {
	for _, mode := range []transport.TLSMode{transport.StartTLSOpportunistic, transport.StartTLSRequired} {
		t.Run(mode.String(), func(t *testing.T) {
			var auths atomic.Int32
			srv := smtptest.NewServer(t, smtptest.Options{TLS: smtptest.TLSStartTLS, Users: map[string]string{"u": "p"}, Faults: func(c smtptest.Command) smtptest.Fault {
				switch c.Stage {
				case smtptest.StartTLS:
					return smtptest.Fault{Inject: "250-injected\r\n250 AUTH PLAIN\r\n"}
				case smtptest.Auth:
					auths.Add(1)
				}
				return smtptest.Fault{}
			}})
			c, logger := newCapture(slog.LevelInfo)
			tr := newSMTP(t, srv, transport.SMTPOptions{TLS: mode, TLSConfig: srv.ClientTLSConfig(), Username: "u", Password: "p", Logger: logger,
				Retry: transport.RetryPolicy{Attempts: 3}})
			results, err := sendThroughMailer(t, tr, mailerSend{N: 3})
			if !errors.Is(err, postroom.ErrTransportUnusable) || !errors.Is(err, transport.ErrSTARTTLSInjection) {
				t.Fatalf("Send: %v, want ErrTransportUnusable and ErrSTARTTLSInjection", err)
			}
			for i, r := range results {
				if r.Status != postroom.StatusDeferred || r.Code != postroom.ReasonTransportUnusable || !strings.Contains(r.Reason, "STARTTLS") {
					t.Errorf("result %d = %s %q, want deferred transport-unusable naming STARTTLS", i, r.Status, r.Reason)
				}
			}
			smtptest.CheckLedger(t, srv, results)
			if err := tr.Send(t.Context(), envelope("again", rcpt(0))); !errors.Is(err, transport.ErrCoolingDown) || !errors.Is(err, transport.ErrSTARTTLSInjection) {
				t.Fatalf("next Send: %v, want ErrCoolingDown after the injection", err)
			}
			if n := srv.Conns(); n != 1 {
				t.Errorf("%d connections, want 1: the refusal is not retried and the cool-down dials nothing", n)
			}
			if n := auths.Load(); n != 0 {
				t.Errorf("%d AUTH exchanges reached the server, want none", n)
			}
			un := c.records("smtp unusable")
			if len(un) != 1 || !strings.Contains(un[0]["error"].String(), transport.ErrSTARTTLSInjection.Error()) || un[0]["step"].String() != "STARTTLS" {
				t.Errorf("unusable records %v; want one naming the STARTTLS injection", un)
			}
		})
	}
}

// TestSMTPCheck: Check runs one session set-up and says, as a
// *SetupError, which step failed, whether the configuration can ever work
// (ErrTransportUnusable), the sentinel that says what is wrong, and the
// reply or what the relay lacks, as data.
func TestSMTPCheck(t *testing.T) {
	users := map[string]string{"u": "p"}
	closed := func(t *testing.T) string {
		srv := smtptest.NewServer(t, smtptest.Options{})
		addr := srv.Addr()
		srv.Close()
		return addr
	}
	tests := []struct {
		name     string
		srv      smtptest.Options
		tr       transport.SMTPOptions
		addr     func(t *testing.T) string // instead of the server's
		step     transport.SetupStep       // 0: Check passes
		unusable bool
		sentinel error
		reply    postroom.DeliveryError // Code, Enhanced and Text of the DeliveryError
	}{
		{name: "plain", tr: transport.SMTPOptions{TLS: transport.NoTLS}},
		{name: "STARTTLS and AUTH", srv: smtptest.Options{TLS: smtptest.TLSStartTLS, Users: users}, tr: transport.SMTPOptions{TLS: transport.StartTLSRequired, Username: "u", Password: "p"}},
		{name: "implicit TLS", srv: smtptest.Options{TLS: smtptest.TLSImplicit}, tr: transport.SMTPOptions{TLS: transport.ImplicitTLS}},
		{name: "nothing listening", addr: closed, step: transport.StepDial},
		{
			name: "greeting 421", srv: smtptest.Options{Faults: smtptest.At(smtptest.When{Stage: smtptest.Greeting}, smtptest.Fault{Code: 421, Enhanced: "4.3.2", Text: "busy"})},
			step: transport.StepGreeting, reply: postroom.DeliveryError{Code: 421, Enhanced: "4.3.2", Text: "busy"},
		},
		{
			name: "greeting 554", srv: smtptest.Options{Faults: smtptest.At(smtptest.When{Stage: smtptest.Greeting}, smtptest.Fault{Code: 554, Enhanced: "5.7.1", Text: "go away"})},
			step: transport.StepGreeting, unusable: true, reply: postroom.DeliveryError{Code: 554, Enhanced: "5.7.1", Text: "go away"},
		},
		{
			name: "EHLO and HELO 550", srv: smtptest.Options{Faults: smtptest.At(smtptest.When{Stage: smtptest.Hello}, smtptest.Fault{Code: 550, Enhanced: "5.7.1", Text: "not you"})},
			step: transport.StepHello, unusable: true, reply: postroom.DeliveryError{Code: 550, Enhanced: "5.7.1", Text: "not you"},
		},
		{
			name: "STARTTLS required, not offered", tr: transport.SMTPOptions{TLS: transport.StartTLSRequired},
			step: transport.StepStartTLS, unusable: true, sentinel: transport.ErrTLSUnavailable, reply: postroom.DeliveryError{Text: "relay offers no STARTTLS"},
		},
		{
			name: "STARTTLS refused", srv: smtptest.Options{TLS: smtptest.TLSStartTLS, Faults: smtptest.At(smtptest.When{Stage: smtptest.StartTLS}, smtptest.Fault{Code: 554, Enhanced: "5.7.0", Text: "no TLS for you"})},
			tr:   transport.SMTPOptions{TLS: transport.StartTLSRequired},
			step: transport.StepStartTLS, unusable: true, reply: postroom.DeliveryError{Code: 554, Enhanced: "5.7.0", Text: "no TLS for you"},
		},
		{
			name: "STARTTLS injection", srv: smtptest.Options{TLS: smtptest.TLSStartTLS, Faults: smtptest.At(smtptest.When{Stage: smtptest.StartTLS}, smtptest.Fault{Inject: "250 AUTH PLAIN\r\n"})},
			step: transport.StepStartTLS, unusable: true, sentinel: transport.ErrSTARTTLSInjection,
			reply: postroom.DeliveryError{Text: "relay sent plaintext after its 220 reply to STARTTLS (STARTTLS injection)"},
		},
		{
			name: "certificate not trusted", srv: smtptest.Options{TLS: smtptest.TLSStartTLS}, tr: transport.SMTPOptions{TLSConfig: &tls.Config{}},
			step: transport.StepTLSHandshake, unusable: true, reply: postroom.DeliveryError{Text: "relay's TLS certificate is not signed by a trusted authority"},
		},
		{
			name: "certificate for another name", srv: smtptest.Options{TLS: smtptest.TLSImplicit}, tr: transport.SMTPOptions{TLS: transport.ImplicitTLS, TLSConfig: &tls.Config{ServerName: "mail.example.org"}},
			step: transport.StepTLSHandshake, unusable: true, reply: postroom.DeliveryError{Text: "relay's TLS certificate is not valid for mail.example.org"},
		},
		{
			name: "implicit TLS to a plaintext server", tr: transport.SMTPOptions{TLS: transport.ImplicitTLS},
			step: transport.StepTLSHandshake, unusable: true, reply: postroom.DeliveryError{Text: "relay does not speak TLS"},
		},
		{
			name: "credentials without TLS", srv: smtptest.Options{Users: users}, tr: transport.SMTPOptions{Username: "u", Password: "p"},
			step: transport.StepAuth, unusable: true, sentinel: transport.ErrInsecureAuth,
			reply: postroom.DeliveryError{Text: "relay offers no STARTTLS, and credentials are only sent under TLS"},
		},
		{
			name: "no AUTH offered", tr: transport.SMTPOptions{Username: "u", Password: "p", AllowInsecureAuth: true},
			step: transport.StepAuth, unusable: true, sentinel: transport.ErrAuthUnavailable, reply: postroom.DeliveryError{Text: "relay offers no AUTH"},
		},
		{
			name: "wrong password", srv: smtptest.Options{Users: users}, tr: transport.SMTPOptions{Username: "u", Password: "wrong", AllowInsecureAuth: true},
			step: transport.StepAuth, unusable: true, reply: postroom.DeliveryError{Code: 535, Enhanced: "5.7.8", Text: "Authentication failed"},
		},
		{
			name: "AUTH 454", srv: smtptest.Options{Users: users, Faults: smtptest.At(smtptest.When{Stage: smtptest.Auth}, smtptest.Fault{Code: 454, Enhanced: "4.7.0", Text: "try later"})},
			tr:   transport.SMTPOptions{Username: "u", Password: "p", AllowInsecureAuth: true},
			step: transport.StepAuth, reply: postroom.DeliveryError{Code: 454, Enhanced: "4.7.0", Text: "try later"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := smtptest.NewServer(t, tt.srv)
			opts := tt.tr
			if opts.TLSConfig == nil {
				opts.TLSConfig = srv.ClientTLSConfig()
			}
			opts.ConnectTimeout, opts.CommandTimeout = 10*time.Second, 10*time.Second
			opts.Addr = srv.Addr()
			if tt.addr != nil {
				opts.Addr = tt.addr(t)
			}
			tr, err := transport.NewSMTP(opts)
			if err != nil {
				t.Fatalf("NewSMTP: %v", err)
			}
			t.Cleanup(func() { _ = tr.Close() })
			err = tr.Check(t.Context())
			if tt.step == 0 {
				if err != nil {
					t.Fatalf("Check: %v", err)
				}
				if err := tr.Send(t.Context(), envelope("after-check", rcpt(0))); err != nil {
					t.Fatalf("Send after Check: %v", err)
				}
				if n := srv.Conns(); n != 1 {
					t.Errorf("%d connections, want 1: Send uses the session Check set up", n)
				}
				return
			}
			var se *transport.SetupError
			if !errors.As(err, &se) || se.Step != tt.step || se.Addr != opts.Addr {
				t.Fatalf("Check: %v; want a SetupError at %v", err, tt.step)
			}
			if got := errors.Is(err, postroom.ErrTransportUnusable); got != tt.unusable {
				t.Errorf("errors.Is(ErrTransportUnusable) = %v, want %v (%v)", got, tt.unusable, err)
			}
			if tt.sentinel != nil && !errors.Is(err, tt.sentinel) {
				t.Errorf("Check: %v, want %v", err, tt.sentinel)
			}
			var de *postroom.DeliveryError
			if !errors.As(err, &de) || de.Code != tt.reply.Code || de.Enhanced != tt.reply.Enhanced || de.Text != tt.reply.Text {
				t.Errorf("DeliveryError %+v, want the reply %d %q %q", de, tt.reply.Code, tt.reply.Enhanced, tt.reply.Text)
			}
			if tt.step == transport.StepDial && de != nil && de.Err == nil {
				t.Errorf("a failed dial's DeliveryError has no cause")
			}
		})
	}
}

// TestSMTPCheckPool: Check dials a new session even when one is idle,
// closing the idle one when MaxConns are all taken; during a cool-down
// it fails at once without contacting the server; after Close it fails
// with ErrClosed.
func TestSMTPCheckPool(t *testing.T) {
	t.Run("idle connection closed to make room", func(t *testing.T) {
		srv := smtptest.NewServer(t, smtptest.Options{})
		socks := newSockets() // the client's sockets: the server learns of a close later
		tr := newSMTP(t, srv, transport.SMTPOptions{TLS: transport.NoTLS, MaxConns: 1, Dial: socks.dial})
		if err := tr.Send(t.Context(), envelope("a", rcpt(0))); err != nil {
			t.Fatal(err)
		}
		if err := tr.Check(t.Context()); err != nil {
			t.Fatalf("Check: %v", err)
		}
		if n, most := socks.counts(); n != 2 || most != 1 {
			t.Errorf("%d connections, at most %d open; want 2, 1 open at a time", n, most)
		}
	})
	t.Run("cool-down", func(t *testing.T) {
		srv := smtptest.NewServer(t, smtptest.Options{Users: map[string]string{"u": "p"}})
		tr := newSMTP(t, srv, transport.SMTPOptions{Username: "u", Password: "wrong", AllowInsecureAuth: true})
		if err := tr.Check(t.Context()); !errors.Is(err, postroom.ErrTransportUnusable) {
			t.Fatalf("Check: %v, want ErrTransportUnusable", err)
		}
		// Send, during the cool-down, does not ask the server; its error
		// names the option and the time.
		err := tr.Send(t.Context(), envelope("a", rcpt(0)))
		var se *transport.SetupError
		var de *postroom.DeliveryError
		if !errors.Is(err, transport.ErrCoolingDown) || !errors.As(err, &se) || se.Step != transport.StepAuth || !errors.As(err, &de) || de.Code != 535 {
			t.Fatalf("Send: %v; want ErrCoolingDown at AUTH with the 535", err)
		}
		if msg := err.Error(); !strings.Contains(msg, "SMTPOptions.SetupCoolDown") || !strings.Contains(msg, "until ") {
			t.Errorf("Send's error %q names neither the option nor the time", msg)
		}
		if n := srv.Conns(); n != 1 {
			t.Errorf("%d connections after Send, want 1", n)
		}
		// Check always asks: refused again, it says so with the server's
		// reply, not ErrCoolingDown.
		err = tr.Check(t.Context())
		if errors.Is(err, transport.ErrCoolingDown) || !errors.As(err, &de) || de.Code != 535 {
			t.Fatalf("second Check: %v; want the server's 535, not ErrCoolingDown", err)
		}
		if n := srv.Conns(); n != 2 {
			t.Errorf("%d connections after the second Check, want 2", n)
		}
	})
	t.Run("check ends the cool-down", func(t *testing.T) {
		var refuse atomic.Bool
		refuse.Store(true)
		srv := smtptest.NewServer(t, smtptest.Options{Users: map[string]string{"u": "p"}, Faults: func(c smtptest.Command) smtptest.Fault {
			if c.Stage == smtptest.Auth && refuse.Load() {
				return smtptest.Fault{Code: 535, Enhanced: "5.7.8", Text: "authentication failed"}
			}
			return smtptest.Fault{}
		}})
		tr := newSMTP(t, srv, transport.SMTPOptions{Username: "u", Password: "p", AllowInsecureAuth: true, SetupCoolDown: time.Hour})
		if err := tr.Check(t.Context()); !errors.Is(err, postroom.ErrTransportUnusable) {
			t.Fatalf("Check: %v, want ErrTransportUnusable", err)
		}
		refuse.Store(false) // the operator fixes the relay
		if err := tr.Check(t.Context()); err != nil {
			t.Fatalf("Check after the fix: %v", err)
		}
		if err := tr.Send(t.Context(), envelope("a", rcpt(0))); err != nil {
			t.Fatalf("Send after a successful Check: %v", err)
		}
	})
	t.Run("closed", func(t *testing.T) {
		srv := smtptest.NewServer(t, smtptest.Options{})
		tr := newSMTP(t, srv, transport.SMTPOptions{})
		_ = tr.Close()
		if err := tr.Check(t.Context()); !errors.Is(err, transport.ErrClosed) || !errors.Is(err, postroom.ErrTransportUnusable) {
			t.Fatalf("Check after Close: %v, want ErrClosed", err)
		}
		results, err := sendThroughMailer(t, tr, mailerSend{Concurrency: 1, N: 2})
		if !errors.Is(err, transport.ErrClosed) {
			t.Fatalf("Mailer.Send after Close: %v, want ErrClosed", err)
		}
		checkResults(t, results, []want{{postroom.StatusDeferred, "transport-unusable: transport closed"}, {postroom.StatusDeferred, "transport-unusable: not attempted: transport closed"}})
	})
	t.Run("canceled", func(t *testing.T) {
		// The server cancels the Check as it accepts the connection, and
		// then never greets: Check returns only if the cancel reaches it.
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		srv := smtptest.NewServer(t, smtptest.Options{Faults: func(c smtptest.Command) smtptest.Fault {
			if c.Stage == smtptest.Greeting {
				cancel()
				return smtptest.Fault{Delay: time.Hour}
			}
			return smtptest.Fault{}
		}})
		tr := newSMTP(t, srv, transport.SMTPOptions{})
		err := tr.Check(ctx)
		var se *transport.SetupError
		if !errors.Is(err, context.Canceled) || errors.Is(err, postroom.ErrTransportUnusable) || !errors.As(err, &se) || se.Step > transport.StepGreeting {
			t.Fatalf("Check: %v; want context.Canceled at the dial or the greeting", err)
		}
	})
}

// TestSMTPStartTLSInjectionLate: plaintext reply lines that arrive only
// once the client has begun the handshake (the server waits for the
// ClientHello before sending them) are the same attack, recognized from
// the TLS record header, not a certificate or network failure.
func TestSMTPStartTLSInjectionLate(t *testing.T) {
	addr := scripted(t, func(c net.Conn, r *bufio.Reader) {
		io.WriteString(c, "220 hostile\r\n")
		if !expect(r, "EHLO") {
			return
		}
		io.WriteString(c, "250-hostile\r\n250 STARTTLS\r\n")
		if !expect(r, "STARTTLS") {
			return
		}
		io.WriteString(c, "220 go ahead\r\n")
		if _, err := r.ReadByte(); err != nil { // the ClientHello has begun
			return
		}
		io.WriteString(c, "250-injected\r\n250 AUTH PLAIN\r\n")
		_, _ = io.Copy(io.Discard, r)
	})
	tr, err := transport.NewSMTP(transport.SMTPOptions{Addr: addr, TLS: transport.StartTLSRequired})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tr.Close() })
	err = tr.Check(t.Context())
	var se *transport.SetupError
	if !errors.Is(err, transport.ErrSTARTTLSInjection) || !errors.Is(err, postroom.ErrTransportUnusable) || !errors.As(err, &se) || se.Step != transport.StepStartTLS {
		t.Fatalf("Check: %v; want ErrSTARTTLSInjection at STARTTLS", err)
	}
}

// TestSMTPTLSAlert: a server that ends the handshake with an alert (here
// no TLS version in common) refuses the configuration, not the network:
// the transport is unusable, at the handshake.
func TestSMTPTLSAlert(t *testing.T) {
	addr := scripted(t, func(c net.Conn, _ *bufio.Reader) {
		_ = tls.Server(c, &tls.Config{MaxVersion: tls.VersionTLS12}).Handshake()
	})
	tr, err := transport.NewSMTP(transport.SMTPOptions{Addr: addr, TLS: transport.ImplicitTLS, TLSConfig: &tls.Config{MinVersion: tls.VersionTLS13}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tr.Close() })
	err = tr.Check(t.Context())
	var se *transport.SetupError
	var de *postroom.DeliveryError
	if !errors.Is(err, postroom.ErrTransportUnusable) || !errors.As(err, &se) || se.Step != transport.StepTLSHandshake || !errors.As(err, &de) || de.Text != "relay refused the TLS handshake" {
		t.Fatalf("Check: %v; want the handshake refused, unusable", err)
	}
}

// TestSMTPConnectionFailedDetail: a relay that refuses the connection (a
// wrong port) or a host that does not resolve gives deferred,
// connection-failed, with what happened in the reason's detail and
// neither the address nor the port.
func TestSMTPConnectionFailedDetail(t *testing.T) {
	srv := smtptest.NewServer(t, smtptest.Options{})
	refused := srv.Addr()
	srv.Close()
	for _, tc := range []struct {
		name, addr string
		want       []string // any of
	}{
		{"refused", refused, []string{"connection-failed: connection refused"}},
		// Without a resolver that answers, the lookup fails otherwise.
		{"no such host", "no-such-host.invalid:25", []string{"connection-failed: no such host", "connection-failed: host lookup failed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := transport.NewSMTP(transport.SMTPOptions{Addr: tc.addr, TLS: transport.NoTLS, Retry: transport.RetryPolicy{Attempts: 1}, ConnectTimeout: 10 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = tr.Close() })
			m, err := postroom.New(tr, postroom.Options{Auth: postroom.NoAuth{}})
			if err != nil {
				t.Fatal(err)
			}
			results, err := m.Send(t.Context(), newCall(1, ""))
			if err != nil {
				t.Fatal(err)
			}
			r := results[0]
			if r.Status != postroom.StatusDeferred || !slices.Contains(tc.want, r.Reason) {
				t.Fatalf("%s %q, want deferred %q", r.Status, r.Reason, tc.want)
			}
			host, port, _ := net.SplitHostPort(tc.addr)
			if strings.Contains(r.Reason, host) || strings.Contains(r.Reason, port) {
				t.Errorf("reason %q shows the relay's address", r.Reason)
			}
		})
	}
}
