package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/httpapi"
	"github.com/postroom/postroom/internal/testkit/apitest"
	"github.com/postroom/postroom/internal/testkit/smtptest"
)

// TestSteerCalls follows docs/EXAMPLE-SERVER.md's "Seeing and steering
// calls" on the server with -database-url: a recipient the relay defers
// is listed as waiting in GET /api/1.0/calls/{id} with the relay's reply
// and its next attempt (an hour away, -outbox-backoff); calls.list lists
// the call with its counts; calls.cancel from another account is 404 and
// changes nothing; the account's own makes the recipient rejected,
// call-canceled, and the call done.
func TestSteerCalls(t *testing.T) {
	t.Parallel()
	pool, err := openDatabase(t.Context(), migrated.DSN(t))
	if err != nil {
		t.Fatalf("openDatabase: %v", err)
	}
	t.Cleanup(pool.Close)
	call := apitest.SmallCall(2)
	deferred := call.Recipients[1].Email
	srv := smtptest.NewServer(t, smtptest.Options{DiscardData: true,
		Faults: smtptest.At(smtptest.When{Stage: smtptest.Rcpt, Addr: deferred}, smtptest.Fault{Code: 451, Enhanced: "4.7.1", Text: "greylisted"})})
	api, _ := startConfig(t, config{SMTP: srv.Addr(), SMTPTLS: "none", NoAuth: true, DB: pool,
		Queue: queueConfig{Backoff: time.Hour, RescueAfter: 10 * time.Second}})

	// post posts v as JSON; the answer's body is kept raw, since
	// apitest.Post reads a 200 as results.
	type answer struct {
		Status int
		Body   []byte
		Error  struct{ Code string }
	}
	post := func(path string, v any) answer {
		t.Helper()
		body, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, api+path, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		if _, err := b.ReadFrom(resp.Body); err != nil {
			t.Fatal(err)
		}
		a := answer{Status: resp.StatusCode, Body: b.Bytes()}
		if a.Status != http.StatusOK {
			if err := json.Unmarshal(a.Body, &a.Error); err != nil {
				t.Fatalf("%s: %d %s: %v", path, a.Status, a.Body, err)
			}
		}
		return a
	}
	st, loc := postAsync(t, api+httpapi.SendPath, apitest.Marshal(t, call))

	type view struct {
		postroom.CallStatus
		Waiting []postroom.WaitingRecipient `json:"waiting"`
	}
	var v view
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		v = view{} // json.Unmarshal would keep the fields a new answer omits
		if code := getJSON(t, api+loc, &v); code != http.StatusOK {
			t.Fatalf("GET: %d", code)
		}
		if len(v.Waiting) == 1 && v.Waiting[0].State == postroom.WaitingDeferred && v.Waiting[0].NextAttempt != nil || time.Now().After(deadline) {
			break
		}
	}
	if len(v.Waiting) != 1 {
		t.Fatalf("call %+v; want one recipient waiting, deferred", v)
	}
	w := v.Waiting[0]
	if w.Index != 1 || w.Email != deferred || w.LastCode != string(postroom.ReasonSoftBounce) || !strings.Contains(w.LastReason, "451 4.7.1 greylisted") ||
		w.Attempts != 1 || time.Until(*w.NextAttempt) < 50*time.Minute {
		t.Errorf("waiting %+v; want recipient 1, the 451 reply, 1 attempt, next in an hour", w)
	}
	if v.State != postroom.CallRunning || v.Counts[postroom.StatusSent] != 1 || v.Counts[postroom.StatusQueued] != 1 {
		t.Errorf("state %s, counts %v; want running, 1 sent, 1 queued", v.State, v.Counts)
	}

	var list []postroom.CallSummary
	if r := post(httpapi.CallsListPath, map[string]any{"key": "k", "account_id": "acct", "limit": 20}); r.Status != http.StatusOK || json.Unmarshal(r.Body, &list) != nil ||
		len(list) != 1 || list[0].ID != st.ID || list[0].Counts[postroom.StatusQueued] != 1 || list[0].Recipients != 2 {
		t.Errorf("calls.list: %d %s; want the call, 1 queued of 2", r.Status, r.Body)
	}
	// -no-auth accepts every key, never another account's call.
	if r := post(httpapi.CallsCancelPath, map[string]any{"key": "k", "account_id": "other", "id": st.ID}); r.Status != http.StatusNotFound || r.Error.Code != "not_found" {
		t.Errorf("another account's calls.cancel: %d %s; want 404 not_found", r.Status, r.Body)
	}
	if r := post(httpapi.CallsListPath, map[string]any{"key": "k", "account_id": "other"}); r.Status != http.StatusOK || string(bytes.TrimSpace(r.Body)) != "[]" {
		t.Errorf("another account's calls.list: %d %s; want []", r.Status, r.Body)
	}
	r := post(httpapi.CallsCancelPath, map[string]any{"key": "k", "account_id": "acct", "id": st.ID, "reason": "wrong price"})
	if r.Status != http.StatusOK || string(bytes.TrimSpace(r.Body)) != `{"id":"`+st.ID+`","canceled":1}` {
		t.Errorf("calls.cancel: %d %s; want 1 canceled", r.Status, r.Body)
	}
	var done view
	if code := getJSON(t, api+loc, &done); code != http.StatusOK || done.State != postroom.CallDone || len(done.Results) != 2 || len(done.Waiting) != 0 {
		t.Fatalf("after calls.cancel: %d %+v; want done", code, done)
	}
	// Over HTTP a result has no code: its reason starts with it.
	if r := done.Results[1]; r.Status != postroom.StatusRejected || !strings.HasPrefix(r.Reason, "call-canceled: wrong price; last attempt: ") {
		t.Errorf("recipient 1: %+v; want rejected, call-canceled with the last attempt", r)
	}
	if r := done.Results[0]; r.Status != postroom.StatusSent {
		t.Errorf("recipient 0: %+v; want sent", r)
	}
}
