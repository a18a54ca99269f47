package transport_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/testkit/smtptest"
	"github.com/postroom/postroom/transport"
	"github.com/postroom/postroom/transport/transporttest"
)

// newSMTP returns a transport to srv, closed in t.Cleanup. Retries are off
// and timeouts short unless opts says otherwise.
func newSMTP(t *testing.T, srv *smtptest.Server, opts transport.SMTPOptions) *transport.SMTP {
	t.Helper()
	opts.Addr = srv.Addr()
	if opts.Retry.Attempts == 0 {
		opts.Retry.Attempts = 1
	}
	if opts.TLS == transport.StartTLSOpportunistic && opts.TLSConfig == nil {
		opts.TLSConfig = srv.ClientTLSConfig()
	}
	for _, d := range []*time.Duration{&opts.ConnectTimeout, &opts.CommandTimeout, &opts.DataTimeout, &opts.EndOfDataTimeout} {
		if *d == 0 {
			*d = 10 * time.Second
		}
	}
	tr, err := transport.NewSMTP(opts)
	if err != nil {
		t.Fatalf("NewSMTP: %v", err)
	}
	t.Cleanup(func() { _ = tr.Close() })
	return tr
}

// message is a small valid message with lines that need dot-stuffing.
func message(id string) []byte {
	return []byte("From: a@example.org\r\nTo: b@example.org\r\nMessage-ID: <" + id +
		"@example.org>\r\nSubject: hi\r\n\r\n.one dot\r\n..two dots\r\n.\r\nend\r\n")
}

func envelope(id string, to ...string) *postroom.Envelope {
	return &postroom.Envelope{SendID: id, From: "sender@example.org", To: to, Data: message(id)}
}

// delivered finds the ledger message holding sendID.
func delivered(srv *smtptest.Server) func(string) ([]byte, bool) {
	return func(sendID string) ([]byte, bool) {
		for _, m := range srv.Messages() {
			if !m.Cut && bytes.Contains(m.Data, []byte("<"+sendID+"@")) {
				return m.Data, true
			}
		}
		return nil, false
	}
}

func TestSMTPConformance(t *testing.T) {
	transporttest.Run(t, func(t *testing.T) (postroom.Transport, func(string) ([]byte, bool)) {
		srv := smtptest.NewServer(t, smtptest.Options{})
		return newSMTP(t, srv, transport.SMTPOptions{}), delivered(srv)
	})
}

func TestSMTPConformanceTLS(t *testing.T) {
	for _, mode := range []struct {
		name   string
		server smtptest.TLSMode
		client transport.TLSMode
	}{
		{"starttls", smtptest.TLSStartTLS, transport.StartTLSRequired},
		{"implicit", smtptest.TLSImplicit, transport.ImplicitTLS},
	} {
		t.Run(mode.name, func(t *testing.T) {
			transporttest.Run(t, func(t *testing.T) (postroom.Transport, func(string) ([]byte, bool)) {
				srv := smtptest.NewServer(t, smtptest.Options{TLS: mode.server, Users: map[string]string{"u": "p"}})
				return newSMTP(t, srv, transport.SMTPOptions{TLS: mode.client, TLSConfig: srv.ClientTLSConfig(), Username: "u", Password: "p"}), delivered(srv)
			})
		})
	}
}

// TestSMTPWire checks the bytes the server receives against the envelope,
// after DATA (dot-stuffing undone exactly) and in a BDAT chunk (nothing
// to undo): bare line ends made CRLF, a last line without one given it.
func TestSMTPWire(t *testing.T) {
	tests := []struct {
		name string
		data string
		want string
	}{
		{"crlf", "a\r\n.b\r\n.\r\n..\r\n", "a\r\n.b\r\n.\r\n..\r\n"},
		{"leading dot", ".x\r\n", ".x\r\n"},
		{"no final crlf", "a\r\nb", "a\r\nb\r\n"},
		{"bare lf", "a\nb\n.c\n", "a\r\nb\r\n.c\r\n"},
		{"bare cr", "a\rb\r\n", "a\r\nb\r\n"},
		{"cr before crlf", "a\r\r\nb\r\n", "a\r\n\r\nb\r\n"},
		{"lf first", "\na\r\n", "\r\na\r\n"},
		{"bare cr last", "a\r\nb\r", "a\r\nb\r\n"},
		{"final dot line", "x\r\n.", "x\r\n.\r\n"},
		{"empty", "", ""},
	}
	for _, chunking := range []bool{false, true} {
		srv := smtptest.NewServer(t, smtptest.Options{Chunking: chunking})
		tr := newSMTP(t, srv, transport.SMTPOptions{})
		for i, tt := range tests {
			t.Run(fmt.Sprintf("chunking=%v/%s", chunking, tt.name), func(t *testing.T) {
				env := &postroom.Envelope{From: "s@example.org", To: []string{fmt.Sprintf("r%d@example.org", i)}, Data: []byte(tt.data)}
				if err := tr.Send(t.Context(), env); err != nil {
					t.Fatalf("Send: %v", err)
				}
				var got []string
				for _, m := range srv.Messages() {
					if m.To[0] == env.To[0] {
						got = append(got, string(m.Data))
						if m.Chunked != chunking {
							t.Errorf("Chunked %v, want %v", m.Chunked, chunking)
						}
					}
				}
				if len(got) != 1 || got[0] != tt.want {
					t.Fatalf("server got %q, want [%q]", got, tt.want)
				}
			})
		}
	}
}

func deliveryError(t *testing.T, err error) *postroom.DeliveryError {
	t.Helper()
	var de *postroom.DeliveryError
	if !errors.As(err, &de) {
		t.Fatalf("error %v (%T) is not a DeliveryError", err, err)
	}
	return de
}

var (
	_ = context.Background
	_ = tls.Config{}
	_ = net.Dial
	_ = runtime.NumGoroutine
	_ = strings.Contains
)
