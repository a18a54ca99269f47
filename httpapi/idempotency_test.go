package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/idempotency"
	"github.com/postroom/postroom/internal/testkit/apitest"
)

// countingTransport counts the messages per address.
type countingTransport struct {
	mu   sync.Mutex
	sent map[string]int
}

func (c *countingTransport) Send(_ context.Context, env *postroom.Envelope) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sent[env.To[0]]++
	return nil
}

// TestIdempotencyKey checks the header's answers: a replay of the same
// body sends nothing, another body is 409 idempotency_conflict, a bad key
// is 400, and without the header each call sends.
func TestIdempotencyKey(t *testing.T) {
	tr := &countingTransport{sent: map[string]int{}}
	url, _ := startMailer(t, tr, postroom.Options{})
	send := url + "/api/1.0/message.send"
	body := marshal(t, smallCall(3))

	first := mustPostKeyed(t, send, body, "order-1001")
	if first.Status != http.StatusOK {
		t.Fatalf("first call: %d %s", first.Status, first.Body)
	}
	// The same payload with other spacing is the same call.
	var spaced bytes.Buffer
	if err := json.Indent(&spaced, body, "", "  "); err != nil {
		t.Fatal(err)
	}
	replay := mustPostKeyed(t, send, spaced.Bytes(), "order-1001")
	if replay.Status != http.StatusOK || !bytes.Equal(replay.Body, first.Body) {
		t.Errorf("replay: %d %s; want the first answer %s", replay.Status, replay.Body, first.Body)
	}
	for a, n := range tr.sent {
		if n != 1 {
			t.Errorf("%s got %d messages, want 1", a, n)
		}
	}

	other := marshal(t, smallCall(2))
	for _, tc := range []struct {
		name   string
		body   []byte
		keys   []string
		status int
		code   string
	}{
		{"another body", other, []string{"order-1001"}, http.StatusConflict, "idempotency_conflict"},
		{"empty key", body, []string{""}, http.StatusBadRequest, "invalid_idempotency_key"},
		{"long key", body, []string{strings.Repeat("k", 256)}, http.StatusBadRequest, "invalid_idempotency_key"},
		{"two keys", body, []string{"a", "b"}, http.StatusBadRequest, "invalid_idempotency_key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := mustPostKeyed(t, send, tc.body, tc.keys...)
			if r.Status != tc.status || r.Error.Code != tc.code {
				t.Errorf("got %d %s; want %d %s", r.Status, r.Body, tc.status, tc.code)
			}
		})
	}
	if r := mustPostKeyed(t, send, body); r.Status != http.StatusOK {
		t.Fatalf("without a key: %d %s", r.Status, r.Body)
	}
	for a, n := range tr.sent {
		if n != 2 {
			t.Errorf("%s got %d messages after a call without a key, want 2", a, n)
		}
	}
}

// TestIdempotencyInProgress checks that a call whose key is held by a
// running call is answered 409 idempotency_in_progress with Retry-After,
// and that once the first is done the retry gets its results.
func TestIdempotencyInProgress(t *testing.T) {
	held, started, release := heldTransport()
	url, _ := startMailer(t, held, postroom.Options{Concurrency: 1})
	send := url + "/api/1.0/message.send"
	body := marshal(t, smallCall(1))
	answered := make(chan *keyedResponse, 1)
	go func() {
		r, err := postKeyed(t.Context(), send, body, "k")
		if err != nil {
			r = &keyedResponse{Response: response{Body: []byte(err.Error())}}
		}
		answered <- r
	}()
	<-started
	r := mustPostKeyed(t, send, body, "k")
	if r.Status != http.StatusConflict || r.Error.Code != "idempotency_in_progress" || r.RetryAfter == "" {
		t.Errorf("while the first runs: %d %s, Retry-After %q; want 409 idempotency_in_progress with Retry-After", r.Status, r.Body, r.RetryAfter)
	}
	close(release)
	first := <-answered
	if first.Status != http.StatusOK {
		t.Fatalf("first call: %d %s", first.Status, first.Body)
	}
	if r := mustPostKeyed(t, send, body, "k"); r.Status != http.StatusOK || !bytes.Equal(r.Body, first.Body) {
		t.Errorf("after the first: %d %s, want %s", r.Status, r.Body, first.Body)
	}
}

// TestIdempotencyBusy checks that past Options.MaxIdempotentCalls a call
// is answered 503 busy at once, not left waiting for a
// database connection.
func TestIdempotencyBusy(t *testing.T) {
	mem, err := idempotency.NewMemory(idempotency.Options{})
	if err != nil {
		t.Fatal(err)
	}
	held, started, release := heldTransport()
	url, _ := startHandler(t, held, postroom.Options{Concurrency: 1}, Options{Idempotency: mem, MaxIdempotentCalls: 1})
	send := url + "/api/1.0/message.send"
	body := marshal(t, smallCall(1))
	answered := make(chan *keyedResponse, 1)
	go func() {
		r, err := postKeyed(t.Context(), send, body, "first")
		if err != nil {
			r = &keyedResponse{Response: response{Body: []byte(err.Error())}}
		}
		answered <- r
	}()
	<-started
	if r := mustPostKeyed(t, send, body, "second"); r.Status != http.StatusServiceUnavailable || r.Error.Code != "busy" || r.RetryAfter == "" {
		t.Errorf("past the bound: %d %s; want 503 busy with Retry-After", r.Status, r.Body)
	}
	close(release)
	if r := <-answered; r.Status != http.StatusOK {
		t.Fatalf("first call: %d %s", r.Status, r.Body)
	}
	if r := mustPostKeyed(t, send, body, "second"); r.Status != http.StatusOK {
		t.Errorf("once the first is done: %d %s", r.Status, r.Body)
	}
}

// countingDeletes counts DeleteExpired calls.
type countingDeletes struct {
	idempotency.Store
	mu      sync.Mutex
	deletes int
}

func (c *countingDeletes) DeleteExpired(ctx context.Context, before time.Time) (int, error) {
	c.mu.Lock()
	c.deletes++
	c.mu.Unlock()
	return c.Store.DeleteExpired(ctx, before)
}

// TestIdempotencySweep checks that the records past the retention window
// are deleted on a request, at most once an hour.
func TestIdempotencySweep(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	mem, err := idempotency.NewMemory(idempotency.Options{Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	store := &countingDeletes{Store: mem}
	s := &idempotent{store: store, now: clock}
	logger, _ := apitest.NewLogger()
	m, err := postroom.New(&countingTransport{sent: map[string]int{}}, postroom.Options{Auth: postroom.NoAuth{}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := idempotency.Run(t.Context(), mem, m, "old", postroom.OpSend, smallCall(1)); err != nil {
		t.Fatal(err)
	}
	s.sweep(t.Context(), logger) // the first request sweeps
	now = now.Add(idempotency.DefaultRetention + time.Minute)
	s.sweep(t.Context(), logger) // a day on: sweeps, the record goes
	s.sweep(t.Context(), logger) // the same hour: does not
	if store.deletes != 2 {
		t.Errorf("%d sweeps, want 2", store.deletes)
	}
	if n, err := mem.DeleteExpired(t.Context(), now); err != nil || n != 0 {
		t.Errorf("%d records left past the window (%v), want 0", n, err)
	}
}
