package httpapi

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/idempotency"
)

// memoryOutbox is an Async that keeps its calls in memory and runs them
// with a Mailer when told to (run): the Handler's side of Async under
// test, without a database.
type memoryOutbox struct {
	m     *postroom.Mailer
	mu    sync.Mutex
	calls map[string]*outboxCall
	keys  map[string]string // idempotency key → call id
}

type outboxCall struct {
	op      postroom.Operation
	account string
	body    []byte
	status  postroom.CallStatus
}

func (o *memoryOutbox) Enqueue(ctx context.Context, op postroom.Operation, call *postroom.Call, key string) (string, error) {
	body, err := json.Marshal(call) // a copy: the call is not kept
	if err != nil {
		return "", err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if id, ok := o.keys[key]; ok && key != "" {
		if string(o.calls[id].body) != string(body) {
			return "", idempotency.ErrConflict
		}
		return id, nil
	}
	id := rand.Text()
	o.calls[id] = &outboxCall{op: op, account: call.AccountID, body: body, status: postroom.CallStatus{ID: id, State: postroom.CallQueued}}
	if key != "" {
		o.keys[key] = id
	}
	return id, nil
}

func (o *memoryOutbox) Status(ctx context.Context, accountID, id string) (*postroom.CallStatus, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	c, ok := o.calls[id]
	if !ok || c.account != accountID {
		return nil, fmt.Errorf("outbox: %q: %w", id, postroom.ErrCallNotFound)
	}
	st := c.status
	return &st, nil
}

// run runs every queued call.
func (o *memoryOutbox) run(t *testing.T) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, c := range o.calls {
		if c.status.State != postroom.CallQueued {
			continue
		}
		var call postroom.Call
		if err := json.Unmarshal(c.body, &call); err != nil {
			t.Fatal(err)
		}
		results, err := o.m.Run(t.Context(), c.op, &call, postroom.RunOptions{})
		if err != nil {
			t.Fatal(err)
		}
		c.status.State, c.status.Results = postroom.CallDone, results
	}
}

// get GETs url with key in KeyHeader (none when ""), and decodes a
// postroom.CallStatus, or returns the status alone.
func get(t *testing.T, method, url, key string) (int, *postroom.CallStatus, http.Header) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set(KeyHeader, key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var st postroom.CallStatus
	if resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusAccepted {
		if err := json.Unmarshal(body, &st); err != nil {
			t.Fatalf("%s %s: %d %s: %v", method, url, resp.StatusCode, body, err)
		}
	}
	return resp.StatusCode, &st, resp.Header
}

// TestAsync: with Options.Async, a call that prefers respond-async is
// answered 202 with its id and a Location that answers its state, and its
// results once it ran; a call that does not prefer it runs at once; an
// idempotency key goes to Enqueue, whose errors are mapped as Run's.
func TestAsync(t *testing.T) {
	var sent sync.Map
	tr := postroom.TransportFunc(func(_ context.Context, env *postroom.Envelope) error {
		sent.Store(env.SendID, env.To[0])
		return nil
	})
	m, err := postroom.New(tr, postroom.Options{Auth: postroom.NoAuth{}})
	if err != nil {
		t.Fatal(err)
	}
	outbox := &memoryOutbox{m: m, calls: map[string]*outboxCall{}, keys: map[string]string{}}
	h, err := New(m, Options{Async: outbox, NoTemplateStore: true})
	if err != nil {
		t.Fatal(err)
	}
	base := serve(t, h, 0)

	postAsync := func(body []byte, headers ...string) (*http.Response, postroom.CallStatus) {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, base+SendPath, strings.NewReader(string(body)))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		for i := 0; i < len(headers); i += 2 {
			req.Header.Add(headers[i], headers[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var st postroom.CallStatus
		if resp.StatusCode == http.StatusAccepted {
			if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
				t.Fatal(err)
			}
		}
		return resp, st
	}

	body := marshal(t, smallCall(3))
	resp, st := postAsync(body, "Prefer", "wait=5, respond-async", "Idempotency-Key", "order-1")
	if resp.StatusCode != http.StatusAccepted || st.ID == "" || st.State != postroom.CallQueued || st.Results != nil {
		t.Fatalf("got %d %+v; want 202 with an id, queued", resp.StatusCode, st)
	}
	loc := resp.Header.Get("Location")
	if loc != CallsPath+st.ID+"?account_id=acct" || resp.Header.Get("Preference-Applied") != "respond-async" {
		t.Errorf("Location %q, Preference-Applied %q", loc, resp.Header.Get("Preference-Applied"))
	}
	if n := countSent(&sent); n != 0 {
		t.Errorf("%d messages sent before the call ran", n)
	}
	if code, got, _ := get(t, http.MethodGet, base+loc, "k"); code != http.StatusOK || got.State != postroom.CallQueued {
		t.Errorf("status before the run: %d %+v", code, got)
	}
	// The same key and body: the same call; another body: 409.
	if resp, again := postAsync(body, "Prefer", "respond-async", "Idempotency-Key", "order-1"); resp.StatusCode != http.StatusAccepted || again.ID != st.ID {
		t.Errorf("replay: %d %+v; want 202 %s", resp.StatusCode, again, st.ID)
	}
	if resp, _ := postAsync(marshal(t, smallCall(2)), "Prefer", "respond-async", "Idempotency-Key", "order-1"); resp.StatusCode != http.StatusConflict {
		t.Errorf("another body: %d; want 409", resp.StatusCode)
	}
	if resp, _ := postAsync(body, "Prefer", "respond-async", "Idempotency-Key", "a", "Idempotency-Key", "b"); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("two keys: %d; want 400", resp.StatusCode)
	}

	outbox.run(t)
	code, got, _ := get(t, http.MethodGet, base+loc, "k")
	if code != http.StatusOK || got.State != postroom.CallDone || len(got.Results) != 3 {
		t.Fatalf("status after the run: %d %+v; want done with 3 results", code, got)
	}
	for _, r := range got.Results {
		if to, ok := sent.Load(r.SendID); r.Status != postroom.StatusSent || !ok || to != r.Email {
			t.Errorf("%+v: want sent, as the transport saw it", r)
		}
	}

	for _, tc := range []struct {
		method, path string
		status       int
	}{
		{http.MethodGet, CallsPath + "nope?account_id=acct", http.StatusNotFound},
		{http.MethodGet, CallsPath, http.StatusNotFound},
		{http.MethodGet, CallsPath + st.ID + "/x?account_id=acct", http.StatusNotFound},
		{http.MethodDelete, CallsPath + st.ID, http.StatusMethodNotAllowed},
		// Another account's key does not read it (NoAuth takes any key).
		{http.MethodGet, CallsPath + st.ID + "?account_id=other", http.StatusNotFound},
	} {
		if code, _, _ := get(t, tc.method, base+tc.path, "k"); code != tc.status {
			t.Errorf("%s %s: %d; want %d", tc.method, tc.path, code, tc.status)
		}
	}

	// Without the preference, the call runs while the request waits.
	if r := post(t, t.Context(), base+SendPath, "application/json", body); r.Status != http.StatusOK || len(r.Results) != 3 {
		t.Errorf("without Prefer: %d %s; want 200 with 3 results", r.Status, r.Body)
	}
}

// TestAsyncUnset: without Options.Async, Prefer: respond-async is ignored
// (RFC 7240 §2) and the calls path is not served.
func TestAsyncUnset(t *testing.T) {
	discard := postroom.TransportFunc(func(context.Context, *postroom.Envelope) error { return nil })
	url, _ := startMailer(t, discard, postroom.Options{})
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url+SendPath, strings.NewReader(string(marshal(t, smallCall(1)))))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Prefer", "respond-async")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("got %d; want 200", resp.StatusCode)
	}
	if code, _, _ := get(t, http.MethodGet, url+CallsPath+"x?account_id=acct", "k"); code != http.StatusNotFound {
		t.Errorf("GET %sx: %d; want 404", CallsPath, code)
	}
}

func countSent(m *sync.Map) int {
	n := 0
	m.Range(func(any, any) bool { n++; return true })
	return n
}

func TestPrefersAsync(t *testing.T) {
	for _, tc := range []struct {
		prefer []string
		want   bool
	}{
		{nil, false},
		{[]string{"respond-async"}, true},
		{[]string{"Respond-Async"}, true},
		{[]string{"wait=10, respond-async"}, true},
		{[]string{"return=minimal", "respond-async; x=1"}, true},
		{[]string{"respond-asynchronously"}, false},
		{[]string{"wait=respond-async"}, false},
	} {
		r, _ := http.NewRequest(http.MethodPost, "/", nil)
		for _, p := range tc.prefer {
			r.Header.Add("Prefer", p)
		}
		if got := prefersAsync(r); got != tc.want {
			t.Errorf("Prefer %q: %v; want %v", tc.prefer, got, tc.want)
		}
	}
}

// TestCallStatusNeedsKey: a call's status, which names its recipients,
// is read only with its account's key in KeyHeader and the account in
// the Location's account_id: without either 401, with a wrong key 401,
// with another account's key and id 404 as for an unknown call; none of
// them shows a recipient.
func TestCallStatusNeedsKey(t *testing.T) {
	discard := postroom.TransportFunc(func(context.Context, *postroom.Envelope) error { return nil })
	m, err := postroom.New(discard, postroom.Options{Auth: postroom.StaticKeys{"acct": {"k"}, "other": {"k2"}}})
	if err != nil {
		t.Fatal(err)
	}
	ob := &memoryOutbox{m: m, calls: map[string]*outboxCall{}, keys: map[string]string{}}
	h, err := New(m, Options{Async: ob, NoTemplateStore: true})
	if err != nil {
		t.Fatal(err)
	}
	base := serve(t, h, 0)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, base+SendPath, strings.NewReader(string(marshal(t, smallCall(2)))))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Prefer", "respond-async")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusAccepted || !strings.HasSuffix(loc, "?account_id=acct") {
		t.Fatalf("got %d, Location %q; want 202 with the account in the Location", resp.StatusCode, loc)
	}
	id := strings.TrimSuffix(strings.TrimPrefix(loc, CallsPath), "?account_id=acct")
	for _, tc := range []struct {
		name, path, key string
		status          int
	}{
		{"no key", loc, "", http.StatusUnauthorized},
		{"no account", CallsPath + id, "k", http.StatusUnauthorized},
		{"wrong key", loc, "k2", http.StatusUnauthorized},
		{"another account", CallsPath + id + "?account_id=other", "k2", http.StatusNotFound},
		{"bad account", CallsPath + id + "?account_id=a%00b", "k", http.StatusBadRequest},
		{"the account's key", loc, "k", http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, base+tc.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			if tc.key != "" {
				req.Header.Set(KeyHeader, tc.key)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tc.status {
				t.Errorf("GET %s: %d %s; want %d", tc.path, resp.StatusCode, body, tc.status)
			}
			if tc.status != http.StatusOK && strings.Contains(string(body), "@") {
				t.Errorf("GET %s: %d %s shows a recipient", tc.path, resp.StatusCode, body)
			}
			if tc.status == http.StatusOK && !strings.Contains(string(body), `"state":"queued"`) {
				t.Errorf("GET %s: %s; want the call, queued", tc.path, body)
			}
		})
	}
}
