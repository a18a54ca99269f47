package main

import (
	"bytes"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/mailtest"
	"github.com/postroom/postroom/internal/smtptest"
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
				msg := mailtest.Parse(t, m.Data)
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

// TestSMTPLoginRefused: a wrong SMTP password is a configuration error; the
// call is answered with every recipient deferred, nothing delivered, and
// the cause logged as an error.
func TestSMTPLoginRefused(t *testing.T) {
	srv := smtptest.NewServer(t, smtptest.Options{TLS: smtptest.TLSStartTLS, Users: map[string]string{"app": "right"}})
	url, log := startConfig(t, config{
		SMTP: srv.Addr(), SMTPTLS: "starttls", SMTPTLSConfig: srv.ClientTLSConfig(),
		SMTPUser: "app", SMTPPassword: "pw-Zq81x-wrong",
		NoAuth: true,
	})
	r := post(t, t.Context(), url+"/api/1.0/message.send", "application/json", marshal(t, smallCall(4)))
	if r.Status != http.StatusOK || len(r.Results) != 4 {
		t.Fatalf("got %d %s; want 200 with 4 results", r.Status, r.Body)
	}
	for i, res := range r.Results {
		if res.Status != postroom.StatusDeferred {
			t.Errorf("result %d = %+v; want deferred", i, res)
		}
	}
	if n := len(srv.Messages()); n != 0 {
		t.Errorf("the SMTP server got %d messages; want none", n)
	}
	if logged := log.String(); !strings.Contains(logged, "level=ERROR") || strings.Contains(logged, "pw-Zq81x") {
		t.Errorf("want the refused login logged as an error, without the password:\n%s", logged)
	}
	// The transport's own records say what was refused.
	records := log.WaitFor(t, "the transport's records", func([]map[string]string) bool { return true })
	if af := byMsg(records, "smtp auth failed"); len(af) != 1 || af[0]["code"] != "535" {
		t.Errorf("smtp auth failed records %v; want one, 535", af)
	}
}
