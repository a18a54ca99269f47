package httpapi

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/testkit/fixture"
	"github.com/postroom/postroom/transport"
)

// TestEndpoints sends both operations through real HTTP into an outbox and
// reads every message back.
func TestEndpoints(t *testing.T) {
	outbox := t.TempDir()
	dir, err := transport.NewDir(outbox)
	if err != nil {
		t.Fatal(err)
	}
	bench := fixture.Shared(t).Call(16)
	url, log := startMailer(t, dir, postroom.Options{
		Auth: postroom.StaticKeys{bench.AccountID: {"old-key", bench.Key}},
		Templates: memoryTemplates(t, map[string]string{
			bench.AccountID + "/order.html": "<p>Hi {{first_name}}, order {{order_id}} from {{company_name}}.</p>",
			bench.AccountID + "/order.txt":  "Hi {{first_name}}, order {{order_id}} from {{company_name}}.",
		}),
	})

	stored := fixture.Shared(t).Call(16)
	stored.Message.HTML, stored.Message.Text = "", ""
	stored.Message.Images, stored.Message.Attachments = nil, nil
	stored.Message.HTMLTemplateID, stored.Message.TextTemplateID = "order.html", "order.txt"
	stored.Message.ReplyToName, stored.Message.ReplyToEmail = "Support", "support@shop.example.com"

	for _, tc := range []struct {
		name     string
		endpoint string
		call     *postroom.Call
		// wantParts are substrings of the decoded text and html bodies, by
		// recipient params.
		wantParts func(params map[string]any) map[string]string
		replyTo   string
	}{
		{
			name: "message.send", endpoint: "/api/1.0/message.send", call: bench,
			wantParts: func(p map[string]any) map[string]string {
				return map[string]string{"text/plain": "Hi " + p["first_name"].(string) + ",", "text/html": p["order_id"].(string)}
			},
		},
		{
			name: "message.send_template", endpoint: "/api/1.0/message.send_template", call: stored,
			wantParts: func(p map[string]any) map[string]string {
				return map[string]string{
					"text/plain": "Hi " + p["first_name"].(string) + ", order " + p["order_id"].(string) + " from Example Shop.",
					"text/html":  ", order " + p["order_id"].(string) + " from Example Shop.</p>",
				}
			},
			replyTo: "support@shop.example.com",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := post(t, t.Context(), url+tc.endpoint, "application/json; charset=utf-8", marshal(t, tc.call))
			if r.Status != http.StatusOK || r.Type != "application/json" {
				t.Fatalf("status %d, Content-Type %q, body %s; want 200 application/json", r.Status, r.Type, r.Body)
			}
			if len(r.Results) != len(tc.call.Recipients) {
				t.Fatalf("%d results for %d recipients", len(r.Results), len(tc.call.Recipients))
			}
			for i, res := range r.Results {
				rcpt := tc.call.Recipients[i]
				if res.Email != rcpt.Email || res.Status != postroom.StatusSent || res.Reason != "" || !sendIDPattern.MatchString(res.SendID) {
					t.Fatalf("result %d = %+v; want %s sent with a send id", i, res, rcpt.Email)
				}
				msg, parts := readEML(t, outbox, res)
				to, err := msg.Header.AddressList("To")
				if err != nil || len(to) != 1 || to[0].Address != rcpt.Email || to[0].Name != rcpt.Name {
					t.Errorf("%s: To %v (%v)", rcpt.Email, to, err)
				}
				if got := msg.Header.Get("Reply-To"); !strings.Contains(got, tc.replyTo) || (tc.replyTo == "") != (got == "") {
					t.Errorf("%s: Reply-To %q; want %q", rcpt.Email, got, tc.replyTo)
				}
				for mt, want := range tc.wantParts(rcpt.Params) {
					if !strings.Contains(parts[mt], want) {
						t.Errorf("%s: %s part %q does not contain %q", rcpt.Email, mt, parts[mt], want)
					}
				}
			}
		})
	}

	// The request log names the account but never the key, nor anything of
	// the bodies.
	logged := log.String()
	if !strings.Contains(logged, "account_id="+bench.AccountID) || !strings.Contains(logged, "/api/1.0/message.send_template") {
		t.Errorf("request log lacks the calls:\n%s", logged)
	}
	for _, secret := range []string{bench.Key, "old-key", bench.Recipients[0].Email, "Alice", "order_id"} {
		if strings.Contains(logged, secret) {
			t.Errorf("request log contains %q:\n%s", secret, logged)
		}
	}
}

// TestMaxRecipients: the spec's largest call goes through the production
// server's timeouts, with every result in order.
func TestMaxRecipients(t *testing.T) {
	var sent atomic.Int64
	count := postroom.TransportFunc(func(ctx context.Context, env *postroom.Envelope) error {
		sent.Add(1)
		return ctx.Err()
	})
	url, _ := startMailer(t, count, postroom.Options{})
	call := smallCall(postroom.DefaultMaxRecipients)

	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	start := time.Now()
	r := post(t, ctx, url+"/api/1.0/message.send", "application/json", marshal(t, call))
	t.Logf("%d recipients in %v", len(call.Recipients), time.Since(start))
	if r.Status != http.StatusOK || len(r.Results) != len(call.Recipients) {
		t.Fatalf("got %d with %d results; want 200 with %d", r.Status, len(r.Results), len(call.Recipients))
	}
	for i, res := range r.Results {
		if res.Email != call.Recipients[i].Email || res.Status != postroom.StatusSent {
			t.Fatalf("result %d = %+v; want %s sent", i, res, call.Recipients[i].Email)
		}
	}
	if n := sent.Load(); n != int64(len(call.Recipients)) {
		t.Errorf("the transport got %d messages; want %d", n, len(call.Recipients))
	}
}
