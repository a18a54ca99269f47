package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/postroom/postroom"
)

// getConsole requests path under the console as account with key (no
// basic authentication when account is empty) and returns the status
// and the body.
func getConsole(t *testing.T, srv, path, account, key string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv+consolePath+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if account != "" {
		req.SetBasicAuth(account, key)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, string(b)
}

// TestConsoleFlag: without -console there is no console; with it and
// -keys, the console asks for basic authentication, takes an account id
// with one of its keys only, and shows that account's message sent
// through the API, its suppression list and its stored templates; a
// cross-site POST is refused.
func TestConsoleFlag(t *testing.T) {
	keys := writeKeys(t, map[string][]string{"acct": {"k"}, "other": {"k2"}})
	plain, _ := startConfig(t, config{Keys: keys, EMLDir: t.TempDir()})
	if res, _ := getConsole(t, plain, "", "acct", "k"); res.StatusCode != http.StatusNotFound {
		t.Errorf("without -console: %d, want 404", res.StatusCode)
	}
	srv, _ := startConfig(t, config{Keys: keys, EMLDir: t.TempDir(), Console: true, TemplatesInMemory: true})
	for _, c := range []struct{ account, key string }{{"", ""}, {"acct", "wrong"}, {"acct", "k2"}, {"nobody", "k"}} {
		res, _ := getConsole(t, srv, "", c.account, c.key)
		if res.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(res.Header.Get("WWW-Authenticate"), "Basic ") {
			t.Errorf("account %q key %q: %d, WWW-Authenticate %q; want 401 asking for basic authentication", c.account, c.key, res.StatusCode, res.Header.Get("WWW-Authenticate"))
		}
	}
	res, body := getConsole(t, srv, "", "acct", "k")
	if res.StatusCode != http.StatusOK || !strings.Contains(body, `<b id="account">acct</b>`) || res.Header.Get("Content-Security-Policy") == "" {
		t.Fatalf("the console's home: %d\n%s", res.StatusCode, body)
	}
	for _, want := range []string{`href="messages"`, `href="suppressions"`, `href="templates"`, `href="preview/"`} {
		if !strings.Contains(body, want) {
			t.Errorf("the home page lacks %s", want)
		}
	}
	if strings.Contains(body, `href="calls"`) {
		t.Error("the home page links queued calls without a database")
	}

	call := smallCall(1)
	call.AccountID, call.Key = "acct", "k"
	call.Recipients[0].Email = "ann@example.org"
	r := post(t, t.Context(), srv+"/api/1.0/message.send", "application/json", marshal(t, call))
	if r.Status != http.StatusOK || len(r.Results) != 1 || r.Results[0].Status != postroom.StatusSent {
		t.Fatalf("message.send: %d %+v", r.Status, r.Results)
	}
	id := r.Results[0].SendID
	_, body = getConsole(t, srv, "messages?q=ann%40example.org", "acct", "k")
	if !strings.Contains(body, id) {
		t.Errorf("the search lacks the message %s:\n%s", id, body)
	}
	_, body = getConsole(t, srv, "message?id="+id, "acct", "k")
	if !strings.Contains(body, "event-send") {
		t.Errorf("the message's timeline lacks its send:\n%s", body)
	}
	if res, _ := getConsole(t, srv, "message?id="+id, "other", "k2"); res.StatusCode != http.StatusNotFound {
		t.Errorf("another account sees the message: %d", res.StatusCode)
	}
	for _, p := range []string{"suppressions", "templates", "preview/", "style.css"} {
		if res, _ := getConsole(t, srv, p, "acct", "k"); res.StatusCode != http.StatusOK {
			t.Errorf("GET %s: %d", p, res.StatusCode)
		}
	}

	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, srv+consolePath+"suppression/remove",
		strings.NewReader(url.Values{"email": {"ann@example.org"}, "scope": {"all"}}.Encode()))
	req.SetBasicAuth("acct", "k")
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusForbidden {
		t.Errorf("a cross-site POST: %d, want 403", res.StatusCode)
	}
}

// TestConsoleNoAuth: with -no-auth the console takes any password, and
// the user name says whose mail it shows.
func TestConsoleNoAuth(t *testing.T) {
	srv, _ := startConfig(t, config{NoAuth: true, EMLDir: t.TempDir(), Console: true})
	if res, _ := getConsole(t, srv, "", "", ""); res.StatusCode != http.StatusUnauthorized {
		t.Errorf("without a user name: %d, want 401", res.StatusCode)
	}
	res, body := getConsole(t, srv, "", "dev", "")
	if res.StatusCode != http.StatusOK || !strings.Contains(body, `<b id="account">dev</b>`) {
		t.Errorf("-no-auth: %d\n%s", res.StatusCode, body)
	}
	if strings.Contains(body, `href="templates"`) {
		t.Error("the console links templates without a managed store")
	}
}

// TestConsoleQueuedCalls: with a database, the console lists the calls
// sent later (package outbox's) and shows one.
func TestConsoleQueuedCalls(t *testing.T) {
	db, err := openDatabase(t.Context(), migrated.DSN(t))
	if err != nil {
		t.Fatalf("openDatabase: %v", err)
	}
	t.Cleanup(db.Close)
	srv, _ := startConfig(t, config{EMLDir: t.TempDir(), NoAuth: true, DB: db, Console: true})
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv+"/api/1.0/message.send", bytes.NewReader(marshal(t, smallCall(2))))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Prefer", "respond-async")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var st postroom.CallStatus
	err = json.NewDecoder(res.Body).Decode(&st)
	res.Body.Close()
	if err != nil || res.StatusCode != http.StatusAccepted || st.ID == "" {
		t.Fatalf("an async call: %d %+v %v", res.StatusCode, st, err)
	}
	_, body := getConsole(t, srv, "calls", "acct", "")
	if !strings.Contains(body, st.ID) {
		t.Errorf("the calls page lacks call %s:\n%s", st.ID, body)
	}
	if res, body := getConsole(t, srv, "call?id="+url.QueryEscape(st.ID), "acct", ""); res.StatusCode != http.StatusOK || !strings.Contains(body, `id="call-state"`) {
		t.Errorf("the call's page: %d\n%s", res.StatusCode, body)
	}
	if res, _ := getConsole(t, srv, "call?id="+url.QueryEscape(st.ID), "other", ""); res.StatusCode != http.StatusNotFound {
		t.Errorf("another account's view of the call: %d, want 404", res.StatusCode)
	}
}
