// Package apitest holds what the tests of package httpapi and of the
// program examples/httpapi share: a log recorder and an HTTP client for
// the API's answers.
package apitest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"testing"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/testkit/workload"
)

// LogRecorder is the server's log in tests: text records, as the
// production server writes them, and the records themselves to wait for.
type LogRecorder struct {
	mu      sync.Mutex
	text    bytes.Buffer
	records []map[string]string // each record's message ("msg") and attributes
	changed chan struct{}       // closed and replaced at every record
}

// NewLogger returns a logger recording into the returned LogRecorder.
func NewLogger() (*slog.Logger, *LogRecorder) {
	rec := &LogRecorder{changed: make(chan struct{})}
	return slog.New(&recordHandler{rec: rec, text: slog.NewTextHandler(&rec.text, nil)}), rec
}

// String returns the log as text.
func (l *LogRecorder) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.text.String()
}

// WaitFor waits until match is true of the records so far and returns them.
func (l *LogRecorder) WaitFor(t testing.TB, what string, match func([]map[string]string) bool) []map[string]string {
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
	rec   *LogRecorder
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

// Response is an answer of the API: the status, the Allow header, and the
// body decoded as results or as an error.
type Response struct {
	Status  int
	Allow   string
	Type    string
	Results []postroom.Result
	Error   ErrorBody
	Body    []byte
}

// Post sends body to url with a Content-Type and decodes the answer.
func Post(t testing.TB, ctx context.Context, url, contentType string, body []byte) *Response {
	t.Helper()
	return Do(t, ctx, http.MethodPost, url, contentType, body)
}

func Do(t testing.TB, ctx context.Context, method, url, contentType string, body []byte) *Response {
	t.Helper()
	r, err := TryDo(ctx, method, url, contentType, body)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TryDo is Do for goroutines other than the test's.
func TryDo(ctx context.Context, method, url, contentType string, body []byte) (*Response, error) {
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
	r := &Response{Status: resp.StatusCode, Allow: resp.Header.Get("Allow"), Type: resp.Header.Get("Content-Type")}
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

// Marshal encodes v as JSON.
func Marshal(t testing.TB, v any) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// SmallCall is a message.send call to n recipients with a short message.
func SmallCall(n int) *postroom.Call {
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

// ErrorBody is the API's answer to a call that failed as a whole.
type ErrorBody struct {
	Status  string   `json:"status"`
	Code    string   `json:"code"`
	Message string   `json:"message"`
	Field   string   `json:"field,omitempty"`
	Fields  []string `json:"fields,omitempty"`
}

// ByMsg returns the records whose message is msg.
func ByMsg(records []map[string]string, msg string) []map[string]string {
	var out []map[string]string
	for _, r := range records {
		if r["msg"] == msg {
			out = append(out, r)
		}
	}
	return out
}

// KeyedResponse is an answer to a call with Idempotency-Key headers.
type KeyedResponse struct {
	Response
	RetryAfter string
}

// PostKeyed posts body to url with an Idempotency-Key header per key.
func PostKeyed(ctx context.Context, url string, body []byte, keys ...string) (*KeyedResponse, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	for _, k := range keys {
		req.Header.Add("Idempotency-Key", k)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	r := &KeyedResponse{Response: Response{Status: resp.StatusCode}, RetryAfter: resp.Header.Get("Retry-After")}
	if r.Body, err = io.ReadAll(resp.Body); err != nil {
		return nil, err
	}
	if r.Status == http.StatusOK {
		err = json.Unmarshal(r.Body, &r.Results)
	} else {
		err = json.Unmarshal(r.Body, &r.Error)
	}
	if err != nil {
		return nil, fmt.Errorf("status %d, body %q: %w", r.Status, r.Body, err)
	}
	return r, nil
}

// MustPostKeyed is PostKeyed for the test's goroutine.
func MustPostKeyed(t *testing.T, url string, body []byte, keys ...string) *KeyedResponse {
	t.Helper()
	r, err := PostKeyed(t.Context(), url, body, keys...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
