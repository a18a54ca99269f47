package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/httpapi"
	"github.com/postroom/postroom/internal/testkit/apitest"
	"github.com/postroom/postroom/internal/testkit/smtptest"
	"github.com/postroom/postroom/outbox"
)

// TestSendLater: with a database, a call with Prefer: respond-async is
// answered 202 with its id and Location, runs on the outbox's workers
// (the River client newServer started), and GET of the Location gives its
// progress, then every result in the call's order, each message in the
// folder; a retry with the same Idempotency-Key gets the same id and sends
// nothing more; the same key with another call is 409; a synchronous call
// still answers its results at once.
func TestSendLater(t *testing.T) {
	db, err := openDatabase(t.Context(), migrated.DSN(t))
	if err != nil {
		t.Fatalf("openDatabase: %v", err)
	}
	t.Cleanup(db.Close)
	folder := t.TempDir()
	api, _ := startConfig(t, config{EMLDir: folder, NoAuth: true, DB: db})

	postAsync := func(t *testing.T, body []byte, key string) (*http.Response, postroom.CallStatus) {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, api+"/api/1.0/message.send", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Prefer", "respond-async")
		req.Header.Set("Idempotency-Key", key)
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

	call := apitest.SmallCall(5)
	call.Recipients[3].Email = "not an address"
	body := apitest.Marshal(t, call)
	resp, st := postAsync(t, body, "order-1")
	if resp.StatusCode != http.StatusAccepted || st.ID == "" || st.State != postroom.CallQueued {
		t.Fatalf("got %d %+v; want 202 with an id, queued", resp.StatusCode, st)
	}
	loc := resp.Header.Get("Location")
	if want := httpapi.CallsPath + st.ID + "?account_id=acct"; loc != want {
		t.Fatalf("Location %q; want %q", loc, want)
	}

	// The workers run the call; poll its status until it is done.
	var done postroom.CallStatus
	deadline := time.Now().Add(time.Minute)
	for {
		if code := getJSON(t, api+loc, &done); code != http.StatusOK {
			t.Fatalf("GET %s: %d", loc, code)
		}
		if done.State == postroom.CallDone || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if done.State != postroom.CallDone || len(done.Results) != 5 {
		t.Fatalf("status %+v; want done with 5 results", done)
	}
	if done.Counts[postroom.StatusSent] != 4 || done.Counts[postroom.StatusInvalid] != 1 {
		t.Errorf("counts %v; want 4 sent, 1 invalid", done.Counts)
	}
	for i, r := range done.Results {
		if r.Email != call.Recipients[i].Email {
			t.Errorf("result %d is %q; want %q (input order)", i, r.Email, call.Recipients[i].Email)
		}
		want := postroom.StatusSent
		if i == 3 {
			want = postroom.StatusInvalid
		}
		if r.Status != want {
			t.Errorf("result %d = %+v; want %s", i, r, want)
			continue
		}
		if want == postroom.StatusSent {
			if _, err := os.Stat(filepath.Join(folder, r.SendID+".eml")); err != nil {
				t.Errorf("recipient %d's message: %v", i, err)
			}
		}
	}

	// A retry with the key: the same call, nothing sent again.
	if resp, again := postAsync(t, body, "order-1"); resp.StatusCode != http.StatusAccepted || again.ID != st.ID {
		t.Errorf("retry: %d %+v; want 202 with id %s", resp.StatusCode, again, st.ID)
	}
	if resp, _ := postAsync(t, apitest.Marshal(t, apitest.SmallCall(2)), "order-1"); resp.StatusCode != http.StatusConflict {
		t.Errorf("the key with another call: %d; want 409", resp.StatusCode)
	}
	if code := getJSON(t, api+httpapi.CallsPath+"0123456789abcdef0123456789abcdef?account_id=acct", new(postroom.CallStatus)); code != http.StatusNotFound {
		t.Errorf("GET of an unknown id: %d; want 404", code)
	}
	// The call's status is its account's: another account reads nothing
	// of it (with -no-auth any key is the account's), and without a key
	// the Location answers 401.
	if code := getJSON(t, api+httpapi.CallsPath+st.ID+"?account_id=other", new(postroom.CallStatus)); code != http.StatusNotFound {
		t.Errorf("GET of the call as another account: %d; want 404", code)
	}
	if code := getJSONKey(t, api+loc, "", new(postroom.CallStatus)); code != http.StatusUnauthorized {
		t.Errorf("GET of the Location without a key: %d; want 401", code)
	}
	entries, err := os.ReadDir(folder)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 4 {
		t.Errorf("%d messages in the folder; want 4, each sent once", len(entries))
	}

	// Without the preference, the call is answered at once.
	if r := apitest.Post(t, t.Context(), api+"/api/1.0/message.send", "application/json", apitest.Marshal(t, apitest.SmallCall(2))); r.Status != http.StatusOK || len(r.Results) != 2 {
		t.Errorf("synchronous call: %d %s; want 200 with 2 results", r.Status, r.Body)
	}
}

// postAsync posts body to url with Prefer: respond-async, fails t unless
// the answer is 202 Accepted, and returns the call's status as answered
// and its Location.
func postAsync(t *testing.T, url string, body []byte) (postroom.CallStatus, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Prefer", "respond-async")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st postroom.CallStatus
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("POST %s: %d, want 202", url, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	return st, resp.Header.Get("Location")
}

// getJSON GETs url with the key "k" in httpapi.KeyHeader (the servers
// of these tests run with -no-auth: any key is the account's) and
// decodes a 200 answer's body into v; it returns the status.

func getJSON(t *testing.T, url string, v any) int {
	t.Helper()
	return getJSONKey(t, url, "k", v)
}

// getJSONKey is getJSON with key in httpapi.KeyHeader (none when "").
func getJSONKey(t *testing.T, url, key string, v any) int {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set(httpapi.KeyHeader, key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
			t.Fatal(err)
		}
	}
	return resp.StatusCode
}

// TestQueueBackoff: -outbox-backoff D waits D before the first retry,
// doubled at each retry up to 4000 s (or D, when longer); zero keeps the
// outbox's own schedule.
func TestQueueBackoff(t *testing.T) {
	if b := (queueConfig{}).options(nil).Backoff; b != nil {
		t.Errorf("no -outbox-backoff: Backoff is set; want nil (the outbox's default)")
	}
	for _, tc := range []struct {
		first time.Duration
		retry int
		want  time.Duration
	}{
		{time.Second, 1, time.Second},
		{time.Second, 3, 4 * time.Second},
		{time.Second, 40, 4000 * time.Second},
		{2 * time.Hour, 5, 2 * time.Hour},
	} {
		if got := (queueConfig{Backoff: tc.first}).options(nil).Backoff(tc.retry); got != tc.want {
			t.Errorf("-outbox-backoff %v, retry %d: %v; want %v", tc.first, tc.retry, got, tc.want)
		}
	}
}

// TestSendLaterExpires: the queue's flags reach the outbox. With
// -outbox-backoff 50ms and -outbox-max-age 1s, a recipient the relay
// keeps deferring (451) is rejected, expired, about a second after the
// call, instead of five days; the other is sent.
func TestSendLaterExpires(t *testing.T) {
	t.Parallel()
	dsn := migrated.DSN(t)
	pool, err := openDatabase(t.Context(), dsn)
	if err != nil {
		t.Fatalf("openDatabase: %v", err)
	}
	t.Cleanup(pool.Close)
	call := apitest.SmallCall(2)
	deferred := call.Recipients[1].Email
	srv := smtptest.NewServer(t, smtptest.Options{DiscardData: true,
		Faults: smtptest.At(smtptest.When{Stage: smtptest.Rcpt, Addr: deferred}, smtptest.Fault{Code: 451, Enhanced: "4.3.0", Text: "try later"})})
	api, _ := startConfig(t, config{SMTP: srv.Addr(), SMTPTLS: "none", NoAuth: true, DB: pool,
		Queue: queueConfig{Backoff: 50 * time.Millisecond, MaxAge: time.Second, RescueAfter: 10 * time.Second}})

	_, loc := postAsync(t, api+"/api/1.0/message.send", apitest.Marshal(t, call))
	var done postroom.CallStatus
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if code := getJSON(t, api+loc, &done); code != http.StatusOK {
			t.Fatalf("GET %s: %d", loc, code)
		}
		if done.State == postroom.CallDone || time.Now().After(deadline) {
			break
		}
	}
	if done.State != postroom.CallDone || len(done.Results) != 2 {
		t.Fatalf("status %+v; want done with 2 results", done)
	}
	if r := done.Results[0]; r.Status != postroom.StatusSent {
		t.Errorf("recipient 0: %+v; want sent", r)
	}
	// Over HTTP a result has no code: its reason starts with it.
	if r := done.Results[1]; r.Status != postroom.StatusRejected || !strings.HasPrefix(r.Reason, string(outbox.ReasonExpired)+": not delivered within 1s") {
		t.Errorf("recipient 1: %+v; want rejected, expired within 1s", r)
	}
}
