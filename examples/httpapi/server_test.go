package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/fixture"
	"github.com/postroom/postroom/internal/mailtest"
)

var sendIDPattern = regexp.MustCompile(`^[0-9a-f]{32}$`)

// writeKeys writes a -keys file and returns its path.
func writeKeys(t *testing.T, keys map[string][]string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "keys.json")
	if err := os.WriteFile(path, marshal(t, keys), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// writeTemplates lays out a -templates folder: <account>/<id> → source.
func writeTemplates(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, src := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// readEML reads the outbox file of one result back with mailtest.Parse
// (which checks its lines) and returns it and the decoded text of its
// text/plain and text/html parts.
func readEML(t *testing.T, outbox string, r postroom.Result) (*mailtest.Message, map[string]string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(outbox, r.SendID+".eml"))
	if err != nil {
		t.Fatalf("%s: %v", r.Email, err)
	}
	msg := mailtest.Parse(t, data)
	parts := map[string]string{}
	for _, p := range msg.Parts {
		if mt := p.Type(); strings.HasPrefix(mt, "text/") {
			parts[mt] = string(p.Body)
		}
	}
	return msg, parts
}

// TestEndpoints sends both operations through real HTTP into an outbox and
// reads every message back.
func TestEndpoints(t *testing.T) {
	outbox := t.TempDir()
	bench := fixture.Shared(t).Call(16)
	url, log := startConfig(t, config{
		Outbox: outbox,
		Keys:   writeKeys(t, map[string][]string{bench.AccountID: {"old-key", bench.Key}}),
		Templates: writeTemplates(t, map[string]string{
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
	url, _ := startMailer(t, count, postroom.Options{}, defaultTimeouts)
	call := smallCall(postroom.DefaultMaxRecipients)

	ctx, cancel := context.WithTimeout(t.Context(), defaultTimeouts.Write)
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

// TestGracefulShutdown: stopping the server lets a call in flight finish
// and answer, and refuses new connections.
func TestGracefulShutdown(t *testing.T) {
	tr, started, release := heldTransport()
	m, err := postroom.New(tr, postroom.Options{Auth: postroom.NoAuth{}})
	if err != nil {
		t.Fatal(err)
	}
	logger, _ := testLogger()
	srv := newHTTPServer(newHandler(m, logger, handlerOptions{MaxBody: defaultMaxBody, MaxInflight: defaultMaxInflight, Budget: time.Minute}), defaultTimeouts, logger)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String() + "/api/1.0/message.send"
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	served := make(chan error, 1)
	go func() { served <- serve(ctx, srv, ln, logger) }()

	answered := make(chan *response, 1)
	body := marshal(t, smallCall(1))
	go func() {
		r, err := tryDo(context.Background(), http.MethodPost, url, "application/json", body)
		if err != nil {
			r = &response{Body: []byte(err.Error())}
		}
		answered <- r
	}()
	<-started
	stop() // as SIGTERM does
	// Shutdown closes the listener first; wait for that, then check that
	// the call in flight is still running.
	probe := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		resp, err := probe.Post(url, "application/json", bytes.NewReader(nil))
		if err != nil {
			break
		}
		resp.Body.Close()
		if time.Now().After(deadline) {
			t.Fatal("the server still accepts connections after shutdown began")
		}
	}
	select {
	case <-answered:
		t.Fatal("the call in flight was answered before its transport finished")
	case err := <-served:
		t.Fatalf("serve returned with a call in flight: %v", err)
	default:
	}
	close(release)
	r := <-answered
	if r.Status != http.StatusOK || len(r.Results) != 1 || r.Results[0].Status != postroom.StatusSent {
		t.Errorf("got %d %s; want 200 with the recipient sent", r.Status, r.Body)
	}
	if err := <-served; err != nil {
		t.Errorf("serve: %v", err)
	}
}

func TestParseFlags(t *testing.T) {
	env := map[string]string{passwordEnv: "s3cret"}
	getenv := func(k string) string { return env[k] }
	for _, tc := range []struct {
		name string
		args []string
		want *config // nil: refused
	}{
		{"no-auth defaults", []string{"-no-auth"}, &config{Listen: defaultListen, Outbox: defaultOutbox, SMTPTLS: "starttls", NoAuth: true, MaxBody: defaultMaxBody, MaxInflight: defaultMaxInflight, SMTPPassword: "s3cret"}},
		{"outbox, keys, templates", []string{"-keys", "k.json", "-outbox", "out", "-templates", "tpl", "-listen", ":9000", "-max-body", "1024", "-max-inflight", "4096"},
			&config{Listen: ":9000", Outbox: "out", SMTPTLS: "starttls", Keys: "k.json", Templates: "tpl", MaxBody: 1024, MaxInflight: 4096, SMTPPassword: "s3cret"}},
		{"smtp", []string{"-no-auth", "-smtp", "relay.example.com:587", "-smtp-tls", "tls", "-smtp-user", "app"},
			&config{Listen: defaultListen, SMTP: "relay.example.com:587", SMTPTLS: "tls", SMTPUser: "app", NoAuth: true, MaxBody: defaultMaxBody, MaxInflight: defaultMaxInflight, SMTPPassword: "s3cret"}},
		{"neither keys nor no-auth", []string{"-outbox", "out"}, nil},
		{"keys and no-auth", []string{"-keys", "k.json", "-no-auth"}, nil},
		{"outbox and smtp", []string{"-no-auth", "-outbox", "out", "-smtp", "relay:25"}, nil},
		{"smtp-user without smtp", []string{"-no-auth", "-smtp-user", "app"}, nil},
		{"bad smtp-tls", []string{"-no-auth", "-smtp", "relay:25", "-smtp-tls", "ssl"}, nil},
		{"zero max-body", []string{"-no-auth", "-max-body", "0"}, nil},
		{"max-inflight under max-body", []string{"-no-auth", "-max-body", "2048", "-max-inflight", "1024"}, nil},
		{"password flag", []string{"-no-auth", "-smtp-password", "x"}, nil},
		{"extra argument", []string{"-no-auth", "serve"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseFlags(tc.args, getenv, io.Discard)
			switch {
			case tc.want == nil && err == nil:
				t.Errorf("parseFlags accepted %q: %+v", tc.args, got)
			case tc.want != nil && err != nil:
				t.Errorf("parseFlags: %v", err)
			case tc.want != nil:
				tc.want.Timeouts = defaultTimeouts
				if got != *tc.want {
					t.Errorf("got %+v\nwant %+v", got, *tc.want)
				}
			}
		})
	}
}
