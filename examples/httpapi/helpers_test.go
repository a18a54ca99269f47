package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"sync"
	"testing"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/workload"
)

// logRecorder is the server's log in tests: text records, as the
// production server writes them, and the records themselves to wait for.
type logRecorder struct {
	mu      sync.Mutex
	text    bytes.Buffer
	records []map[string]string // each record's message ("msg") and attributes
	changed chan struct{}       // closed and replaced at every record
}

// testLogger returns a logger recording into the returned logRecorder.
func testLogger() (*slog.Logger, *logRecorder) {
	rec := &logRecorder{changed: make(chan struct{})}
	return slog.New(&recordHandler{rec: rec, text: slog.NewTextHandler(&rec.text, nil)}), rec
}

// String returns the log as text.
func (l *logRecorder) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.text.String()
}

// waitFor waits until match is true of the records so far and returns them.
func (l *logRecorder) waitFor(t testing.TB, what string, match func([]map[string]string) bool) []map[string]string {
	t.Helper()
	for {
		l.mu.Lock()
		records, changed := slices.Clone(l.records), l.changed
		l.mu.Unlock()
		if match(records) {
			return records
		}
		select {
		case <-changed:
		case <-t.Context().Done():
			t.Fatalf("the log never had %s:\n%s", what, l.String())
		}
	}
}

// recordHandler writes each record as text and keeps its attributes.
type recordHandler struct {
	rec   *logRecorder
	text  slog.Handler
	attrs []slog.Attr
}

func (h *recordHandler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.text.Enabled(ctx, level)
}

func (h *recordHandler) Handle(ctx context.Context, r slog.Record) error {
	m := map[string]string{"msg": r.Message, "level": r.Level.String()}
	add := func(a slog.Attr) bool {
		m[a.Key] = a.Value.Resolve().String()
		return true
	}
	for _, a := range h.attrs {
		add(a)
	}
	r.Attrs(add)
	h.rec.mu.Lock()
	defer h.rec.mu.Unlock()
	err := h.text.Handle(ctx, r)
	h.rec.records = append(h.rec.records, m)
	close(h.rec.changed)
	h.rec.changed = make(chan struct{})
	return err
}

func (h *recordHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &recordHandler{rec: h.rec, text: h.text.WithAttrs(attrs), attrs: append(slices.Clip(h.attrs), attrs...)}
}

func (h *recordHandler) WithGroup(string) slog.Handler {
	panic("the server's log uses no groups")
}

// start serves h with the production server of newHTTPServer on
// 127.0.0.1:0 and returns its base URL. The server is shut down in Cleanup.
func start(t testing.TB, h http.Handler, to timeouts, logger *slog.Logger) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, newHTTPServer(h, to, logger), ln, logger) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return "http://" + ln.Addr().String()
}

// startConfig builds the server of cfg with newServer and starts it.
func startConfig(t testing.TB, cfg config) (url string, log *logRecorder) {
	t.Helper()
	logger, log := testLogger()
	if cfg.Timeouts == (timeouts{}) {
		cfg.Timeouts = defaultTimeouts
	}
	if cfg.MaxBody == 0 {
		cfg.MaxBody = defaultMaxBody
	}
	if cfg.MaxInflight == 0 {
		cfg.MaxInflight = max(defaultMaxInflight, cfg.MaxBody)
	}
	h, cleanup, err := newServer(cfg, logger)
	if err != nil {
		t.Fatalf("newServer: %v", err)
	}
	t.Cleanup(func() {
		if err := cleanup(); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	return start(t, h, cfg.Timeouts, logger), log
}

// startMailer serves a Mailer over t with the given Options (NoAuth unless
// set), the timeouts to, and the default limits.
func startMailer(tb testing.TB, tr postroom.Transport, opts postroom.Options, to timeouts) (url string, log *logRecorder) {
	tb.Helper()
	return startHandler(tb, tr, opts, handlerOptions{}, to)
}

// startHandler is startMailer with handler options; those left zero take
// the defaults, the budget that of to.
func startHandler(tb testing.TB, tr postroom.Transport, opts postroom.Options, ho handlerOptions, to timeouts) (url string, log *logRecorder) {
	tb.Helper()
	logger, log := testLogger()
	if opts.Auth == nil {
		opts.Auth = postroom.NoAuth{}
	}
	m, err := postroom.New(tr, opts)
	if err != nil {
		tb.Fatal(err)
	}
	if ho.MaxBody == 0 {
		ho.MaxBody = defaultMaxBody
	}
	if ho.MaxInflight == 0 {
		ho.MaxInflight = max(defaultMaxInflight, ho.MaxBody)
	}
	if ho.Budget == 0 {
		ho.Budget = to.Write - to.Answer
	}
	ho.Templates = opts.Templates != nil
	return start(tb, newHandler(m, logger, ho), to, logger), log
}

// response is an answer of the API: the status, the Allow header, and the
// body decoded as results or as an error.
type response struct {
	Status  int
	Allow   string
	Type    string
	Results []postroom.Result
	Error   apiError
	Body    []byte
}

// post sends body to url with a Content-Type and decodes the answer.
func post(t testing.TB, ctx context.Context, url, contentType string, body []byte) *response {
	t.Helper()
	return do(t, ctx, http.MethodPost, url, contentType, body)
}

func do(t testing.TB, ctx context.Context, method, url, contentType string, body []byte) *response {
	t.Helper()
	r, err := tryDo(ctx, method, url, contentType, body)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// tryDo is do for goroutines other than the test's.
func tryDo(ctx context.Context, method, url, contentType string, body []byte) (*response, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	r := &response{Status: resp.StatusCode, Allow: resp.Header.Get("Allow"), Type: resp.Header.Get("Content-Type")}
	if r.Body, err = io.ReadAll(resp.Body); err != nil {
		return nil, fmt.Errorf("reading the answer: %w", err)
	}
	if r.Status == http.StatusOK {
		err = json.Unmarshal(r.Body, &r.Results)
	} else {
		err = json.Unmarshal(r.Body, &r.Error)
	}
	if err != nil {
		return nil, fmt.Errorf("%s %s: status %d, body %q is not the API's JSON: %w", method, url, r.Status, r.Body, err)
	}
	return r, nil
}

// marshal encodes v as JSON.
func marshal(t testing.TB, v any) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// smallCall is a message.send call to n recipients with a short message.
func smallCall(n int) *postroom.Call {
	call := &postroom.Call{
		Key:       "k",
		AccountID: "acct",
		Message: postroom.Message{
			FromName:  "Example",
			FromEmail: "sender@example.com",
			Subject:   "Hello {{name}}",
			Text:      "Hello {{name}}, this is message {{n}}.",
		},
		Recipients: make([]postroom.Recipient, n),
	}
	for i := range call.Recipients {
		call.Recipients[i] = postroom.Recipient{
			Email:  workload.Address(i),
			Name:   fmt.Sprintf("User %d", i),
			Params: map[string]any{"name": fmt.Sprintf("User %d", i), "n": i},
		}
	}
	return call
}

// errIO is what a broken template store returns.
var errIO = errors.New("read /srv/templates/acct/order.html: input/output error")

// brokenStore is a TemplateStore whose disk fails.
type brokenStore struct{}

func (brokenStore) Template(context.Context, string, string) (string, error) {
	return "", fmt.Errorf("templatestore: %w", errIO)
}
