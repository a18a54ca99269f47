package httpapi

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/postroom/postroom"
)

// TestAsyncWithoutSteering: with an Async that is not an AsyncSteering,
// the steering paths are unknown paths (404 not_found) and a call's status
// has no waiting list. (The steering endpoints' own tests run over a real
// outbox, in package outbox: TestHTTPSteerAccounts and the next.)
func TestAsyncWithoutSteering(t *testing.T) {
	discard := postroom.TransportFunc(func(context.Context, *postroom.Envelope) error { return nil })
	m, err := postroom.New(discard, postroom.Options{Auth: postroom.NoAuth{}})
	if err != nil {
		t.Fatal(err)
	}
	ob := &memoryOutbox{m: m, calls: map[string]*outboxCall{}, keys: map[string]string{}}
	if _, ok := any(ob).(AsyncSteering); ok {
		t.Fatal("memoryOutbox is an AsyncSteering: this test needs one that is not")
	}
	h, err := New(m, Options{Async: ob, NoTemplateStore: true})
	if err != nil {
		t.Fatal(err)
	}
	base := serve(t, h, 0)
	for _, p := range []string{CallsListPath, CallsCancelPath, CallsRetryPath} {
		a := postJSON(t, base+p, map[string]string{"key": "k", "account_id": "a", "id": "x"})
		if a.status != http.StatusNotFound || !bytes.Contains(a.body, []byte(`"not_found"`)) {
			t.Errorf("%s: %d %s; want 404 not_found", p, a.status, a.body)
		}
	}
	id, err := ob.Enqueue(t.Context(), postroom.OpSend, smallCall(2), "")
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, base+CallsPath+id+"?account_id=acct", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(KeyHeader, "k")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || !bytes.Contains(body, []byte(`"state":"queued"`)) || bytes.Contains(body, []byte(`"waiting"`)) {
		t.Errorf("GET %s: %d %s; want 200, queued, no waiting list", CallsPath+id, resp.StatusCode, body)
	}
}
