package transport_test

import (
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/smtptest"
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
