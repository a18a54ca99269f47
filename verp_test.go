package postroom_test

import (
	"context"
	"strings"
	"testing"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/testkit/smtptest"
	"github.com/postroom/postroom/transport"
)

// TestVERPMailFrom sends through a real SMTP server and checks each
// message's MAIL FROM: the recipient's VERP address when VERP is on (and
// VERP.SendID reads the send_id back), the call's from_email when off.
func TestVERPMailFrom(t *testing.T) {
	for _, tc := range []struct {
		name string
		verp postroom.VERP
	}{
		{"off", postroom.VERP{}},
		{"default local", postroom.VERP{Domain: "bounce.example.com"}},
		{"own local", postroom.VERP{Local: "b.list", Domain: "bounce.example.com"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := smtptest.NewServer(t, smtptest.Options{})
			tr, err := transport.NewSMTP(transport.SMTPOptions{Addr: srv.Addr(), TLS: transport.NoTLS})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { tr.Close() })
			call := smallCall("ann@example.net", "bob@example.org")
			call.Message.BCC = "audit@shop.example.com"
			results, err := newMailer(t, tr, postroom.Options{VERP: tc.verp}).Send(t.Context(), call)
			if err != nil {
				t.Fatal(err)
			}
			byRcpt := map[string]string{}
			for _, m := range srv.Messages() {
				byRcpt[m.To[0]] = m.From
			}
			for _, r := range results {
				from, ok := byRcpt[r.Email]
				if r.Status != postroom.StatusSent || !ok {
					t.Fatalf("%s: %+v, received %v", r.Email, r, ok)
				}
				if tc.verp.Domain == "" {
					if from != "orders@shop.example.com" {
						t.Errorf("%s: MAIL FROM %q, want from_email", r.Email, from)
					}
					continue
				}
				local := tc.verp.Local
				if local == "" {
					local = postroom.DefaultVERPLocal
				}
				if want := local + "+" + r.SendID + "@bounce.example.com"; from != want {
					t.Errorf("%s: MAIL FROM %q, want %q", r.Email, from, want)
				}
				if id, ok := tc.verp.SendID(from); !ok || id != r.SendID {
					t.Errorf("SendID(%q) = %q, %v; want %q", from, id, ok, r.SendID)
				}
			}
		})
	}
}

func TestVERPSendID(t *testing.T) {
	v := postroom.VERP{Domain: "bounce.example.com"}
	id := "0123456789abcdef0123456789abcdef"
	for _, tc := range []struct {
		addr string
		ok   bool
	}{
		{"bounces+" + id + "@bounce.example.com", true},
		{"<bounces+" + id + "@bounce.example.com>", true},
		{"Bounces+" + strings.ToUpper(id) + "@Bounce.Example.COM", true},
		{"bounces+" + id + "@example.com", false},
		{"other+" + id + "@bounce.example.com", false},
		{"bounces+" + id[:31] + "@bounce.example.com", false},
		{"bounces+" + id[:31] + "g@bounce.example.com", false},
		{"bounces" + id + "@bounce.example.com", false},
		{"bounces+" + id, false},
		{"", false},
	} {
		got, ok := v.SendID(tc.addr)
		if ok != tc.ok || ok && got != id {
			t.Errorf("SendID(%q) = %q, %v; want ok=%v", tc.addr, got, ok, tc.ok)
		}
	}
	if _, ok := (postroom.VERP{}).SendID("bounces+" + id + "@bounce.example.com"); ok {
		t.Error("the zero VERP parsed an address")
	}
}

func TestNewChecksVERP(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    postroom.VERP
		ok   bool
	}{
		{"off", postroom.VERP{}, true},
		{"on", postroom.VERP{Domain: "bounce.example.com"}, true},
		{"local without domain", postroom.VERP{Local: "b"}, false},
		{"domain upper case", postroom.VERP{Domain: "Bounce.example.com"}, false},
		{"domain without dot", postroom.VERP{Domain: "localhost"}, false},
		{"local with plus", postroom.VERP{Local: "a+b", Domain: "bounce.example.com"}, false},
		{"local too long", postroom.VERP{Local: strings.Repeat("a", 32), Domain: "bounce.example.com"}, false},
		{"local not an atom", postroom.VERP{Local: "a b", Domain: "bounce.example.com"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := postroom.New(postroom.TransportFunc(func(context.Context, *postroom.Envelope) error { return nil }),
				postroom.Options{Auth: postroom.NoAuth{}, VERP: tc.v})
			if (err == nil) != tc.ok {
				t.Errorf("New: %v, want ok=%v", err, tc.ok)
			}
		})
	}
}
