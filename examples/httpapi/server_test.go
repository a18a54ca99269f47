package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"testing"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/httpapi"
	"github.com/postroom/postroom/unsubscribe"
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

// TestGracefulShutdown: stopping the server lets a call in flight finish
// and answer, and refuses new connections.
func TestGracefulShutdown(t *testing.T) {
	// The transport holds the message until release is closed: the call
	// stays in flight for as long as the test needs, with no timing.
	started, release := make(chan struct{}, 1), make(chan struct{})
	tr := postroom.TransportFunc(func(ctx context.Context, _ *postroom.Envelope) error {
		started <- struct{}{}
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	m, err := postroom.New(tr, postroom.Options{Auth: postroom.NoAuth{}})
	if err != nil {
		t.Fatal(err)
	}
	logger, _ := testLogger()
	h, err := httpapi.New(m, httpapi.Options{Logger: logger, CallTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	srv := newHTTPServer(h, defaultTimeouts, logger)
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
	secret := bytes.Repeat([]byte{7}, 32)
	env := map[string]string{passwordEnv: "s3cret", unsubscribeKeyEnv: "k2:" + base64.StdEncoding.EncodeToString(secret) + ", k1:" + base64.StdEncoding.EncodeToString(secret[:32])}
	getenv := func(k string) string { return env[k] }
	base := func(h hearingConfig) *config {
		return &config{Listen: defaultListen, EMLDir: defaultEMLDir, SMTPTLS: "starttls", NoAuth: true, MaxBody: defaultMaxBody, MaxInflight: defaultMaxInflight, SMTPPassword: "s3cret", DatabaseURL: defaultDatabaseURL, Hearing: h}
	}
	keys := []unsubscribe.Key{{ID: "k2", Secret: secret}, {ID: "k1", Secret: secret}}
	for _, tc := range []struct {
		name string
		args []string
		want *config // nil: refused
	}{
		{"no-auth defaults", []string{"-no-auth"}, &config{Listen: defaultListen, EMLDir: defaultEMLDir, SMTPTLS: "starttls", NoAuth: true, MaxBody: defaultMaxBody, MaxInflight: defaultMaxInflight, SMTPPassword: "s3cret", DatabaseURL: defaultDatabaseURL}},
		{"eml-dir, keys, templates", []string{"-keys", "k.json", "-eml-dir", "out", "-templates", "tpl", "-listen", ":9000", "-max-body", "1024", "-max-inflight", "4096"},
			&config{Listen: ":9000", EMLDir: "out", SMTPTLS: "starttls", Keys: "k.json", Templates: "tpl", MaxBody: 1024, MaxInflight: 4096, SMTPPassword: "s3cret", DatabaseURL: defaultDatabaseURL}},
		{"smtp", []string{"-no-auth", "-smtp", "relay.example.com:587", "-smtp-tls", "tls", "-smtp-user", "app"},
			&config{Listen: defaultListen, SMTP: "relay.example.com:587", SMTPTLS: "tls", SMTPUser: "app", NoAuth: true, MaxBody: defaultMaxBody, MaxInflight: defaultMaxInflight, SMTPPassword: "s3cret", DatabaseURL: defaultDatabaseURL}},
		{"neither keys nor no-auth", []string{"-eml-dir", "out"}, nil},
		{"keys and no-auth", []string{"-keys", "k.json", "-no-auth"}, nil},
		{"eml-dir and smtp", []string{"-no-auth", "-eml-dir", "out", "-smtp", "relay:25"}, nil},
		{"smtp-user without smtp", []string{"-no-auth", "-smtp-user", "app"}, nil},
		{"bad smtp-tls", []string{"-no-auth", "-smtp", "relay:25", "-smtp-tls", "ssl"}, nil},
		{"zero max-body", []string{"-no-auth", "-max-body", "0"}, nil},
		{"max-inflight under max-body", []string{"-no-auth", "-max-body", "2048", "-max-inflight", "1024"}, nil},
		{"password flag", []string{"-no-auth", "-smtp-password", "x"}, nil},
		{"extra argument", []string{"-no-auth", "serve"}, nil},
		{"log-results", []string{"-no-auth", "-log-results", "WARN"}, &config{Listen: defaultListen, EMLDir: defaultEMLDir, SMTPTLS: "starttls", NoAuth: true, MaxBody: defaultMaxBody, MaxInflight: defaultMaxInflight, SMTPPassword: "s3cret", DatabaseURL: defaultDatabaseURL, ResultLog: httpapi.ResultLog{Level: slog.LevelWarn}}},
		{"log-results off", []string{"-no-auth", "-log-results", "off"}, &config{Listen: defaultListen, EMLDir: defaultEMLDir, SMTPTLS: "starttls", NoAuth: true, MaxBody: defaultMaxBody, MaxInflight: defaultMaxInflight, SMTPPassword: "s3cret", DatabaseURL: defaultDatabaseURL, ResultLog: httpapi.ResultLog{Off: true}}},
		{"bad log-results", []string{"-no-auth", "-log-results", "loud"}, nil},
		{"log-level", []string{"-no-auth", "-log-level", "debug"}, &config{Listen: defaultListen, EMLDir: defaultEMLDir, SMTPTLS: "starttls", NoAuth: true, MaxBody: defaultMaxBody, MaxInflight: defaultMaxInflight, SMTPPassword: "s3cret", DatabaseURL: defaultDatabaseURL, LogLevel: slog.LevelDebug}},
		{"bad log-level", []string{"-no-auth", "-log-level", "loud"}, nil},
		{"outbox settings", []string{"-no-auth", "-database-url", "postgres://db/app", "-outbox-backoff", "1s", "-outbox-max-age", "1m", "-outbox-batch-size", "20", "-outbox-job-size", "40", "-outbox-workers", "8", "-outbox-rescue-after", "30s"},
			&config{Listen: defaultListen, EMLDir: defaultEMLDir, SMTPTLS: "starttls", NoAuth: true, MaxBody: defaultMaxBody, MaxInflight: defaultMaxInflight, SMTPPassword: "s3cret", DatabaseURL: "postgres://db/app",
				Queue: queueConfig{Backoff: time.Second, MaxAge: time.Minute, BatchSize: 20, JobSize: 40, MaxWorkers: 8, RescueAfter: 30 * time.Second}}},
		{"outbox settings without a database", []string{"-no-auth", "-in-memory", "-outbox-max-age", "1m"}, nil},
		{"negative outbox setting", []string{"-no-auth", "-database-url", "postgres://db/app", "-outbox-workers", "-1"}, nil},
		{"bounces", []string{"-no-auth", "-bounce-listen", ":2525", "-bounce-domain", "bounce.example.com"}, base(hearingConfig{BounceListen: ":2525", BounceDomain: "bounce.example.com"})},
		{"bounces by LMTP", []string{"-no-auth", "-bounce-listen", "127.0.0.1:2424", "-bounce-lmtp", "-bounce-domain", "bounce.example.com"}, base(hearingConfig{BounceListen: "127.0.0.1:2424", BounceLMTP: true, BounceDomain: "bounce.example.com"})},
		{"VERP alone", []string{"-no-auth", "-bounce-domain", "bounce.example.com"}, base(hearingConfig{BounceDomain: "bounce.example.com"})},
		{"bounce-listen without a domain", []string{"-no-auth", "-bounce-listen", ":2525"}, nil},
		{"bounce-lmtp without bounce-listen", []string{"-no-auth", "-bounce-lmtp", "-bounce-domain", "bounce.example.com"}, nil},
		{"bounce-domain an address", []string{"-no-auth", "-bounce-domain", "bounces@example.com"}, nil},
		{"unsubscribe-url", []string{"-no-auth", "-unsubscribe-url", "https://mail.example.com/unsubscribe/"}, base(hearingConfig{UnsubscribeURL: "https://mail.example.com/unsubscribe/", UnsubscribeKeys: keys})},
		{"unsubscribe-url http", []string{"-no-auth", "-unsubscribe-url", "http://mail.example.com/unsubscribe/"}, nil},
		{"unsubscribe-url at the root", []string{"-no-auth", "-unsubscribe-url", "https://mail.example.com/"}, nil},
		{"unsubscribe-url under /api/", []string{"-no-auth", "-unsubscribe-url", "https://mail.example.com/api/u"}, nil},
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
				if !reflect.DeepEqual(got, *tc.want) {
					t.Errorf("got %+v\nwant %+v", got, *tc.want)
				}
			}
		})
	}
}

// TestKeysAndTemplates checks the wiring of -keys, -templates and their
// absence: a key from the file is accepted and any other refused, a
// template from the folder is used, and a server without -templates says
// message.send_template is not configured.
func TestKeysAndTemplates(t *testing.T) {
	keys := writeKeys(t, map[string][]string{"acct": {"k"}})
	api, _ := startConfig(t, config{EMLDir: t.TempDir(), Keys: keys, Templates: writeTemplates(t, map[string]string{"acct/good": "Hello {{name}}"})})
	bare, _ := startConfig(t, config{EMLDir: t.TempDir(), Keys: keys})
	stored := smallCall(2)
	stored.Message.Text, stored.Message.TextTemplateID = "", "good"
	wrongKey := smallCall(1)
	wrongKey.Key = "wrong"
	for _, tc := range []struct {
		name, base, path string
		call             *postroom.Call
		status           int
		code             string
	}{
		{"key accepted", api, "/api/1.0/message.send", smallCall(2), http.StatusOK, ""},
		{"key refused", api, "/api/1.0/message.send", wrongKey, http.StatusUnauthorized, "invalid_key"},
		{"stored template", api, "/api/1.0/message.send_template", stored, http.StatusOK, ""},
		{"no -templates", bare, "/api/1.0/message.send_template", stored, http.StatusNotImplemented, "not_configured"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := post(t, t.Context(), tc.base+tc.path, "application/json", marshal(t, tc.call))
			if r.Status != tc.status || r.Error.Code != tc.code {
				t.Fatalf("got %d %s; want %d %q", r.Status, r.Body, tc.status, tc.code)
			}
			for _, res := range r.Results {
				if res.Status != postroom.StatusSent || !sendIDPattern.MatchString(res.SendID) {
					t.Errorf("%+v; want sent", res)
				}
			}
		})
	}
	for name, content := range map[string]string{"not JSON": "[", "no accounts": "{}", "empty key": `{"acct": [""]}`} {
		t.Run("keys file "+name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "keys.json")
			if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := readKeys(path); err == nil {
				t.Errorf("readKeys accepted %q", content)
			}
		})
	}
}

// TestUnsubscribeKeys: the keys of -unsubscribe-url come from the
// environment, and a missing or weak key refuses the flag.
func TestUnsubscribeKeys(t *testing.T) {
	good := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{1}, 32))
	for _, v := range []string{"", "k1", "k1:not base64!", "k1:" + base64.StdEncoding.EncodeToString([]byte("short")), "k1:" + good + ",k2"} {
		_, err := parseFlags([]string{"-no-auth", "-unsubscribe-url", "https://mail.example.com/u/"}, func(string) string { return v }, io.Discard)
		if err == nil {
			t.Errorf("$%s=%q accepted", unsubscribeKeyEnv, v)
		}
	}
}
