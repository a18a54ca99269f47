package main

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/testkit/smtptest"
	"github.com/postroom/postroom/postroomtest"
	"github.com/postroom/postroom/transport"
)

// TestSMTP sends both operations through real HTTP and the SMTP transport
// into the in-process SMTP server, with STARTTLS and AUTH.
func TestSMTP(t *testing.T) {
	const user, password = "app", "relay-password"
	srv := smtptest.NewServer(t, smtptest.Options{TLS: smtptest.TLSStartTLS, Users: map[string]string{user: password}})
	url, _ := startConfig(t, config{
		SMTP: srv.Addr(), SMTPTLS: "starttls", SMTPTLSConfig: srv.ClientTLSConfig(),
		SMTPUser: user, SMTPPassword: password,
		NoAuth:    true,
		Templates: writeTemplates(t, map[string]string{"acct/welcome": "Welcome, {{name}}!"}),
	})

	send := smallCall(3)
	send.Message.BCC = "archive@example.com"
	stored := smallCall(2)
	stored.Message.Text, stored.Message.TextTemplateID = "", "welcome"

	for _, tc := range []struct {
		name, path string
		call       *postroom.Call
		body       string // in every message's text
	}{
		{"message.send", "/api/1.0/message.send", send, "this is message"},
		{"message.send_template", "/api/1.0/message.send_template", stored, "Welcome, User"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(srv.Messages())
			r := post(t, t.Context(), url+tc.path, "application/json", marshal(t, tc.call))
			if r.Status != http.StatusOK || len(r.Results) != len(tc.call.Recipients) {
				t.Fatalf("got %d %s; want 200 with %d results", r.Status, r.Body, len(tc.call.Recipients))
			}
			got := srv.Messages()[before:]
			if len(got) != len(tc.call.Recipients) {
				t.Fatalf("the SMTP server got %d messages; want %d", len(got), len(tc.call.Recipients))
			}
			for i, res := range r.Results {
				rcpt := tc.call.Recipients[i]
				if res.Email != rcpt.Email || res.Status != postroom.StatusSent || !sendIDPattern.MatchString(res.SendID) {
					t.Errorf("result %d = %+v; want %s sent", i, res, rcpt.Email)
					continue
				}
				// Messages arrive in any order: find this one by its send id.
				j := slices.IndexFunc(got, func(m smtptest.Message) bool {
					return bytes.Contains(m.Data, []byte("Message-ID: <"+res.SendID+"@"))
				})
				if j < 0 {
					t.Errorf("%s: no message with send id %s in the ledger", rcpt.Email, res.SendID)
					continue
				}
				m := got[j]
				wantTo := []string{rcpt.Email}
				if tc.call.Message.BCC != "" {
					wantTo = append(wantTo, tc.call.Message.BCC)
				}
				if m.From != tc.call.Message.FromEmail || !slices.Equal(m.To, wantTo) {
					t.Errorf("%s: envelope from %q to %q; want %q to %q", rcpt.Email, m.From, m.To, tc.call.Message.FromEmail, wantTo)
				}
				msg := postroomtest.Parse(t, m.Data)
				if to, err := msg.Header.AddressList("To"); err != nil || len(to) != 1 || to[0].Address != rcpt.Email {
					t.Errorf("%s: To %v (%v)", rcpt.Email, to, err)
				}
				if !strings.Contains(string(m.Data), tc.body) {
					t.Errorf("%s: the message lacks %q", rcpt.Email, tc.body)
				}
			}
		})
	}
}

// TestSMTPLoginRefused: a relay that refuses the login stops the server at
// start (newServer runs the transport's Check), with an error that says
// so and never shows the password; the relay gets no message.
func TestSMTPLoginRefused(t *testing.T) {
	srv := smtptest.NewServer(t, smtptest.Options{TLS: smtptest.TLSStartTLS, Users: map[string]string{"app": "right"}})
	h, cleanup, err := newServer(config{
		SMTP: srv.Addr(), SMTPTLS: "starttls", SMTPTLSConfig: srv.ClientTLSConfig(),
		SMTPUser: "app", SMTPPassword: "pw-Zq81x-wrong",
		NoAuth: true,
	}, slog.New(slog.DiscardHandler))
	if err == nil {
		_ = cleanup()
		t.Fatalf("newServer = %v, nil; want an error: the relay refuses the login", h)
	}
	if !errors.Is(err, postroom.ErrTransportUnusable) {
		t.Errorf("newServer error %v; want one wrapping postroom.ErrTransportUnusable", err)
	}
	var se *transport.SetupError
	if !errors.As(err, &se) || se.Step != transport.StepAuth {
		t.Errorf("newServer error %#v; want a *transport.SetupError at AUTH", err)
	}
	if strings.Contains(err.Error(), "pw-Zq81x") {
		t.Errorf("the error shows the password: %v", err)
	}
	if n := len(srv.Messages()); n != 0 {
		t.Errorf("the SMTP server got %d messages; want none", n)
	}
}

// TestSMTPNoSTARTTLSHint: a plaintext relay (the in-process server
// without TLS, as Mailpit or a local Postfix) under the default
// -smtp-tls starttls stops the server at start with an error that says to
// run with -smtp-tls none, still wrapping transport.ErrTLSUnavailable.
func TestSMTPNoSTARTTLSHint(t *testing.T) {
	srv := smtptest.NewServer(t, smtptest.Options{})
	h, cleanup, err := newServer(config{SMTP: srv.Addr(), SMTPTLS: "starttls", NoAuth: true}, slog.New(slog.DiscardHandler))
	if err == nil {
		_ = cleanup()
		t.Fatalf("newServer = %v, nil; want an error: the relay offers no STARTTLS", h)
	}
	if !errors.Is(err, transport.ErrTLSUnavailable) || !errors.Is(err, postroom.ErrTransportUnusable) {
		t.Errorf("newServer error %v; want one wrapping transport.ErrTLSUnavailable and postroom.ErrTransportUnusable", err)
	}
	var se *transport.SetupError
	if !errors.As(err, &se) || se.Step != transport.StepStartTLS {
		t.Errorf("newServer error %#v; want a *transport.SetupError at STARTTLS", err)
	}
	if !strings.Contains(err.Error(), "-smtp-tls none") {
		t.Errorf("newServer error %q does not say to run with -smtp-tls none", err)
	}
	if n := len(srv.Messages()); n != 0 {
		t.Errorf("the SMTP server got %d messages; want none", n)
	}

	// The same relay with -smtp-tls none takes the messages.
	url, _ := startConfig(t, config{SMTP: srv.Addr(), SMTPTLS: "none", NoAuth: true})
	if r := post(t, t.Context(), url+"/api/1.0/message.send", "application/json", marshal(t, smallCall(1))); r.Status != http.StatusOK || len(r.Results) != 1 || r.Results[0].Status != postroom.StatusSent {
		t.Fatalf("with -smtp-tls none: %d %s; want 200, sent", r.Status, r.Body)
	}
	if n := len(srv.Messages()); n != 1 {
		t.Errorf("with -smtp-tls none the SMTP server got %d messages; want 1", n)
	}
}

// TestTLSHintTransport: the server's transport logs the advice to run
// with -smtp-tls none once, at the first message a plaintext relay is
// refused for, and returns the transport's error as it is; other
// failures log nothing.
func TestTLSHintTransport(t *testing.T) {
	srv := smtptest.NewServer(t, smtptest.Options{})
	s, err := newSMTP(config{SMTP: srv.Addr(), SMTPTLS: "starttls"}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	var logged bytes.Buffer
	tr := withTLSHint(s, slog.New(slog.NewTextHandler(&logged, nil)))
	if _, ok := tr.(postroom.Queuer); ok {
		t.Errorf("the wrapper of a transport that is no Queuer is one")
	}
	m, err := postroom.New(tr, postroom.Options{Auth: postroom.NoAuth{}})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		results, err := m.Send(t.Context(), smallCall(2))
		if err != nil && !errors.Is(err, postroom.ErrTransportUnusable) {
			t.Fatal(err)
		}
		for _, r := range results {
			if r.Status == postroom.StatusSent {
				t.Fatalf("result %+v; want the recipient refused", r)
			}
		}
	}
	if n := strings.Count(logged.String(), "-smtp-tls none"); n != 1 {
		t.Errorf("the advice logged %d times; want once:\n%s", n, logged.String())
	}
	if n := len(srv.Messages()); n != 0 {
		t.Errorf("the SMTP server got %d messages; want none", n)
	}

	// A Queuer keeps its answer through the wrapper.
	q := withTLSHint(queued{}, slog.New(slog.DiscardHandler))
	if qq, ok := q.(postroom.Queuer); !ok || !qq.Queued() {
		t.Errorf("the wrapper of a Queuer is %T; want a Queuer answering true", q)
	}
}

// queued is a transport that queues: a Queuer answering true.
type queued struct{}

func (queued) Send(context.Context, *postroom.Envelope) error { return nil }
func (queued) Queued() bool                                   { return true }
