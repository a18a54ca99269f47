package outbox_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/postroom/postroom/httpapi"
)

// TestHTTPAccountIDRefused: under NoAuth, which takes any account, the
// calls.* endpoints refuse an account_id that PostgreSQL's text cannot
// hold (a NUL) or that no account has (a control character, over 255
// bytes): 400 validation_error naming account_id, never a 500 from the
// outbox's query; so does message.send with Prefer: respond-async.
func TestHTTPAccountIDRefused(t *testing.T) {
	e := newEnv(t, setup{noWork: true})
	h, err := httpapi.New(smtpMailer(t, e.srv.Addr(), nil), httpapi.Options{Async: e.ob.AccountCalls()})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	he := &httpEnv{env: e, url: srv.URL}
	id := strings.Repeat("0", 32)
	for _, account := range []string{"a\x00b", "a\r\nb", strings.Repeat("a", 256)} {
		for _, path := range []string{httpapi.CallsListPath, httpapi.CallsCancelPath, httpapi.CallsRetryPath} {
			body := map[string]any{"key": "k", "account_id": account}
			if path != httpapi.CallsListPath {
				body["id"] = id
			}
			var e2 apiErr
			he.do(t, http.MethodPost, path, body).decode(t, http.StatusBadRequest, &e2)
			if e2.Code != "validation_error" || e2.Field != "account_id" {
				t.Errorf("%s with account_id %q: code %q field %q, want validation_error on account_id", path, account, e2.Code, e2.Field)
			}
		}
	}
	// Nor does a call sent later reach the outbox's tables with one.
	call := map[string]any{"key": "k", "account_id": "a\x00b", "message": map[string]any{"from_email": "a@example.com", "subject": "s", "text": "t"},
		"recipients": []map[string]any{{"email": "b@example.com"}}}
	var e2 apiErr
	he.do(t, http.MethodPost, httpapi.SendPath, call, "Prefer", "respond-async").decode(t, http.StatusBadRequest, &e2)
	if e2.Code != "validation_error" || e2.Field != "account_id" {
		t.Errorf("message.send, respond-async, with a NUL in account_id: code %q field %q, want validation_error on account_id", e2.Code, e2.Field)
	}
	// A good account is still served.
	var calls []map[string]any
	he.do(t, http.MethodPost, httpapi.CallsListPath, map[string]any{"key": "k", "account_id": "acct"}).decode(t, http.StatusOK, &calls)
}
