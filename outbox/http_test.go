package outbox_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/httpapi"
	"github.com/postroom/postroom/internal/testkit/outboxenv"
	"github.com/postroom/postroom/internal/testkit/smtptest"
	"github.com/postroom/postroom/outbox"
)

// HTTP serves the steering endpoints of an httpapi.Handler.
var _ httpapi.AsyncSteering = outbox.AccountCalls{}

// steerKeys are the accounts of the steering tests: "acct" (newCall's)
// and "other".
var steerKeys = postroom.StaticKeys{"acct": {"k"}, "other": {"k2"}}

// httpEnv is an env served by an httpapi.Handler over real HTTP, with
// steerKeys.
type httpEnv struct {
	*env
	url string
}

func newHTTPEnv(t *testing.T, s setup) *httpEnv {
	t.Helper()
	s.auth = steerKeys
	e := newEnv(t, s)
	h, err := httpapi.New(smtpMailer(t, e.srv.Addr(), steerKeys), httpapi.Options{Async: e.ob.AccountCalls()})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &httpEnv{env: e, url: srv.URL}
}

// answer is an HTTP answer: its status, next-cursor header and body.
type answer struct {
	status int
	next   string
	body   []byte
}

// decode decodes a's body into v, failing the test unless it is status.
func (a answer) decode(t *testing.T, status int, v any) {
	t.Helper()
	if a.status != status {
		t.Fatalf("status %d, body %s; want %d", a.status, a.body, status)
	}
	if err := json.Unmarshal(a.body, v); err != nil {
		t.Fatalf("%v: %s", err, a.body)
	}
}

// apiErr is the body of an error answer.
type apiErr struct {
	Code  string `json:"code"`
	Field string `json:"field"`
}

// do sends a request with a JSON body (none when v is nil) and headers
// (name, value pairs).
func (e *httpEnv) do(t *testing.T, method, path string, v any, headers ...string) answer {
	t.Helper()
	var body []byte
	if v != nil {
		var err error
		if body, err = json.Marshal(v); err != nil {
			t.Fatal(err)
		}
	}
	req, err := http.NewRequestWithContext(t.Context(), method, e.url+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if v != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	if _, err := b.ReadFrom(resp.Body); err != nil {
		t.Fatal(err)
	}
	return answer{status: resp.StatusCode, next: resp.Header.Get(httpapi.NextCursorHeader), body: b.Bytes()}
}

// enqueueHTTP posts call with Prefer: respond-async and returns its id.
func (e *httpEnv) enqueueHTTP(t *testing.T, call *postroom.Call) string {
	t.Helper()
	var st postroom.CallStatus
	e.do(t, http.MethodPost, httpapi.SendPath, call, "Prefer", "respond-async").decode(t, http.StatusAccepted, &st)
	return st.ID
}

// callView is the answer of GET /api/1.0/calls/{id}.
type callView struct {
	postroom.CallStatus
	Waiting []postroom.WaitingRecipient `json:"waiting"`
}

// call GETs call id of account acct, with its key.
func (e *httpEnv) call(t *testing.T, id string) callView {
	t.Helper()
	var v callView
	e.do(t, http.MethodGet, httpapi.CallsPath+id+"?account_id=acct", nil, httpapi.KeyHeader, "k").decode(t, http.StatusOK, &v)
	return v
}

// pollCall gets the call until ok holds, or the test's deadline.
func (e *httpEnv) pollCall(t *testing.T, id string, ok func(callView) bool) callView {
	t.Helper()
	for {
		v := e.call(t, id)
		if ok(v) {
			return v
		}
		select {
		case <-t.Context().Done():
			t.Fatalf("call %s: %+v", id, v)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// auth is the key and account of a steering request.
type auth struct {
	Key       string `json:"key"`
	AccountID string `json:"account_id"`
}

var (
	acct  = auth{"k", "acct"}
	other = auth{"k2", "other"}
)

type steerReq struct {
	auth
	ID     string `json:"id,omitempty"`
	Reason string `json:"reason,omitempty"`
}

type listReq struct {
	auth
	Limit  int    `json:"limit,omitempty"`
	Cursor string `json:"cursor,omitempty"`
}

// TestHTTPSteerAccounts lists and cancels over HTTP with nothing sent
// (no River client): each account sees and steers its own calls only, a
// call of another account is 404 and left as it was, and the refused
// requests name their field.
func TestHTTPSteerAccounts(t *testing.T) {
	t.Parallel()
	engines(t, func(t *testing.T, eng outboxenv.Engine) {
		e := newHTTPEnv(t, setup{engine: eng, noWork: true})
		var ids []string // acct's, oldest first
		for i := range 3 {
			ids = append(ids, e.enqueueHTTP(t, newCall("list", i+1)))
		}
		otherCall := newCall("oth", 2)
		otherCall.AccountID, otherCall.Key = "other", "k2"
		otherID := e.enqueueHTTP(t, otherCall)

		// calls.list: newest first, two pages, counts all queued.
		var page1, page2 []postroom.CallSummary
		a := e.do(t, http.MethodPost, httpapi.CallsListPath, listReq{auth: acct, Limit: 2})
		a.decode(t, http.StatusOK, &page1)
		if a.next == "" {
			t.Fatal("no next cursor after the first page of 2 of 3 calls")
		}
		b := e.do(t, http.MethodPost, httpapi.CallsListPath, listReq{auth: acct, Limit: 2, Cursor: a.next})
		b.decode(t, http.StatusOK, &page2)
		if b.next != "" {
			t.Errorf("next cursor %q after the last page", b.next)
		}
		got := append(page1, page2...)
		if len(got) != 3 {
			t.Fatalf("listed %d calls, want 3: %+v", len(got), got)
		}
		for k, c := range got {
			i := 2 - k
			if c.ID != ids[i] || c.Recipients != i+1 || c.Counts[postroom.StatusQueued] != i+1 || c.State != postroom.CallQueued || c.Operation != "message.send" {
				t.Errorf("listed[%d] = %+v, want call %s with %d queued", k, c, ids[i], i+1)
			}
		}
		var others []postroom.CallSummary
		e.do(t, http.MethodPost, httpapi.CallsListPath, listReq{auth: other}).decode(t, http.StatusOK, &others)
		if len(others) != 1 || others[0].ID != otherID {
			t.Errorf("other's list: %+v, want only %s", others, otherID)
		}

		// The waiting recipients of a queued call.
		v := e.call(t, ids[2])
		if len(v.Waiting) != 3 || v.Waiting[2].Email != addr("list", 2) || v.Waiting[2].State != postroom.WaitingNew || v.Waiting[2].Index != 2 {
			t.Errorf("waiting %+v, want the 3 recipients, new", v.Waiting)
		}

		// Refused requests, and another account's call: nothing changes.
		for _, c := range []struct {
			name, path string
			body       any
			status     int
			code       string
			field      string
		}{
			{"cancel of another account's call", httpapi.CallsCancelPath, steerReq{auth: other, ID: ids[0]}, 404, "not_found", ""},
			{"retry of another account's call", httpapi.CallsRetryPath, steerReq{auth: other, ID: ids[0]}, 404, "not_found", ""},
			{"cancel of an unknown call", httpapi.CallsCancelPath, steerReq{auth: acct, ID: "nope"}, 404, "not_found", ""},
			{"wrong key", httpapi.CallsCancelPath, steerReq{auth: auth{"k2", "acct"}, ID: ids[0]}, 401, "invalid_key", ""},
			{"wrong key, list", httpapi.CallsListPath, listReq{auth: auth{"nope", "acct"}}, 401, "invalid_key", ""},
			{"no id", httpapi.CallsRetryPath, steerReq{auth: acct}, 400, "validation_error", "id"},
			{"long reason", httpapi.CallsCancelPath, steerReq{auth: acct, ID: ids[0], Reason: strings.Repeat("x", 1001)}, 400, "validation_error", "reason"},
			{"NUL in reason", httpapi.CallsCancelPath, steerReq{auth: acct, ID: ids[0], Reason: "a\x00b"}, 400, "validation_error", "reason"},
			{"line break in id", httpapi.CallsRetryPath, steerReq{auth: acct, ID: ids[0] + "\n"}, 400, "validation_error", "id"},
			{"bad cursor", httpapi.CallsListPath, listReq{auth: acct, Cursor: "!!"}, 400, "validation_error", "cursor"},
			{"limit too large", httpapi.CallsListPath, listReq{auth: acct, Limit: outbox.MaxCallsLimit + 1}, 400, "validation_error", "limit"},
			{"unknown field", httpapi.CallsCancelPath, map[string]any{"key": "k", "account_id": "acct", "call_id": ids[0]}, 400, "invalid_json", ""},
		} {
			t.Run(c.name, func(t *testing.T) {
				var e2 apiErr
				e.do(t, http.MethodPost, c.path, c.body).decode(t, c.status, &e2)
				if e2.Code != c.code || e2.Field != c.field {
					t.Errorf("code %q field %q, want %q %q", e2.Code, e2.Field, c.code, c.field)
				}
			})
		}
		if st, err := e.ob.Status(t.Context(), ids[0]); err != nil || st.State != postroom.CallQueued {
			t.Fatalf("acct's call after the refused requests: %+v, %v; want still queued", st, err)
		}

		// A call's status, which names its recipients, is its account's
		// alone: another account's key reads nothing of it, as of an unknown
		// call; no key, or a wrong one, is 401.
		for _, c := range []struct {
			name, path, key string
			status          int
		}{
			{"status with another account's key", httpapi.CallsPath + ids[0] + "?account_id=other", "k2", 404},
			{"status of an unknown call", httpapi.CallsPath + "nope?account_id=acct", "k", 404},
			{"status without a key", httpapi.CallsPath + ids[0] + "?account_id=acct", "", 401},
			{"status with a wrong key", httpapi.CallsPath + ids[0] + "?account_id=acct", "k2", 401},
		} {
			t.Run(c.name, func(t *testing.T) {
				var headers []string
				if c.key != "" {
					headers = []string{httpapi.KeyHeader, c.key}
				}
				a := e.do(t, http.MethodGet, c.path, nil, headers...)
				if a.status != c.status || bytes.Contains(a.body, []byte("@")) {
					t.Errorf("%d %s; want %d, no recipient", a.status, a.body, c.status)
				}
			})
		}
		if _, err := e.ob.AccountCalls().Status(t.Context(), "other", ids[0]); !errors.Is(err, outbox.ErrNotFound) {
			t.Errorf("AccountCalls().Status of acct's call for other: %v; want ErrNotFound", err)
		}
		if a := e.do(t, http.MethodGet, httpapi.CallsCancelPath, nil); a.status != http.StatusMethodNotAllowed {
			t.Errorf("GET calls.cancel: %d %s", a.status, a.body)
		}

		// The account's own cancel.
		var canceled struct {
			ID       string `json:"id"`
			Canceled int    `json:"canceled"`
		}
		e.do(t, http.MethodPost, httpapi.CallsCancelPath, steerReq{auth: acct, ID: ids[2], Reason: "wrong price"}).decode(t, http.StatusOK, &canceled)
		if canceled.ID != ids[2] || canceled.Canceled != 3 {
			t.Errorf("calls.cancel answered %+v, want 3", canceled)
		}
		v = e.call(t, ids[2])
		if v.State != postroom.CallDone || len(v.Waiting) != 0 || len(v.Results) != 3 {
			t.Fatalf("cancelled call: %+v", v)
		}
		for _, r := range v.Results {
			if r.Status != postroom.StatusRejected || r.Reason != "call-canceled: wrong price" {
				t.Errorf("result %+v, want rejected call-canceled: wrong price", r)
			}
		}
		if st, err := e.ob.Status(t.Context(), otherID); err != nil || st.State != postroom.CallQueued {
			t.Errorf("other's call: %+v, %v; want still queued", st, err)
		}
	})
}

// TestHTTPWaitingThenRetry: a greylisting relay defers half the
// recipients; GET /api/1.0/calls/{id} shows each with its last reply, one
// attempt and a next attempt an hour away, counts still queued; calls.retry
// has them tried now, and the call ends with every recipient sent.
func TestHTTPWaitingThenRetry(t *testing.T) {
	t.Parallel()
	engines(t, func(t *testing.T, eng outboxenv.Engine) {
		e := newHTTPEnv(t, setup{engine: eng,
			faults: greylist(odd),
			opts:   outbox.Options{JobSize: 4, Backoff: func(int) time.Duration { return time.Hour }},
		})
		id := e.enqueueHTTP(t, newCall("hwait", 4))
		v := e.pollCall(t, id, func(v callView) bool {
			n := 0
			for _, w := range v.Waiting {
				if w.State == postroom.WaitingDeferred && w.NextAttempt != nil {
					n++
				}
			}
			// The even recipients' results may be written a moment after the
			// deferrals (results are written while a batch runs).
			return n == 2 && len(v.Waiting) == 2 && v.Counts[postroom.StatusSent] == 2
		})
		if v.State != postroom.CallRunning || v.Counts[postroom.StatusQueued] != 2 || v.Counts[postroom.StatusSent] != 2 {
			t.Errorf("state %s counts %v, want running, 2 sent, 2 queued", v.State, v.Counts)
		}
		for k, w := range v.Waiting {
			if w.Index != 2*k+1 || w.LastStatus != "deferred" || w.LastCode != string(postroom.ReasonSoftBounce) ||
				!strings.Contains(w.LastReason, "451") || !strings.Contains(w.LastReason, "greylisted") || w.Attempts != 1 {
				t.Errorf("waiting[%d] = %+v, want deferred, the 451 reply, 1 attempt", k, w)
			}
			if d := time.Until(*w.NextAttempt); d < 50*time.Minute || d > time.Hour {
				t.Errorf("waiting[%d] next attempt in %v, want about an hour", k, d)
			}
		}
		var retried struct {
			Retried int `json:"retried"`
		}
		e.do(t, http.MethodPost, httpapi.CallsRetryPath, steerReq{auth: other, ID: id}).decode(t, http.StatusNotFound, &apiErr{})
		e.do(t, http.MethodPost, httpapi.CallsRetryPath, steerReq{auth: acct, ID: id}).decode(t, http.StatusOK, &retried)
		if retried.Retried != 2 {
			t.Errorf("calls.retry answered %d, want 2", retried.Retried)
		}
		v = e.pollCall(t, id, func(v callView) bool { return v.State == postroom.CallDone }) // within the test's deadline, not the hour
		if v.Counts[postroom.StatusSent] != 4 || len(v.Waiting) != 0 {
			t.Errorf("done: counts %v, waiting %+v; want 4 sent", v.Counts, v.Waiting)
		}
		smtptest.CheckLedger(t, e.srv, v.Results)
	})
}

// TestHTTPCancelInFlight cancels a call over HTTP while a slow relay
// holds its messages: GET shows the recipients being sent, calls.cancel
// settles the others, the ones being sent get their outcome from the run
// (never call-canceled), and the relay's ledger agrees with every result.
func TestHTTPCancelInFlight(t *testing.T) {
	t.Parallel()
	engines(t, func(t *testing.T, eng outboxenv.Engine) {
		e := newHTTPEnv(t, setup{engine: eng,
			faults: func(c smtptest.Command) smtptest.Fault {
				if c.Stage == smtptest.EndOfData {
					return smtptest.Fault{Delay: 400 * time.Millisecond}
				}
				return smtptest.Fault{}
			},
			opts: outbox.Options{JobSize: 20, BatchSize: 2},
		})
		id := e.enqueueHTTP(t, newCall("hflight", 20))
		v := e.pollCall(t, id, func(v callView) bool {
			for _, w := range v.Waiting {
				if w.State == postroom.WaitingSending {
					return true
				}
			}
			return false
		})
		var canceled struct {
			Canceled int `json:"canceled"`
		}
		e.do(t, http.MethodPost, httpapi.CallsCancelPath, steerReq{auth: other, ID: id}).decode(t, http.StatusNotFound, &apiErr{})
		e.do(t, http.MethodPost, httpapi.CallsCancelPath, steerReq{auth: acct, ID: id, Reason: "stop"}).decode(t, http.StatusOK, &canceled)
		done := e.pollCall(t, id, func(v callView) bool { return v.State == postroom.CallDone })
		waitJobsEnded(t, e.db)
		smtptest.CheckLedger(t, e.srv, done.Results)
		n := 0
		for _, r := range done.Results {
			if callCanceled(r) {
				n++
				if r.Status != postroom.StatusRejected || !strings.HasPrefix(r.Reason, "call-canceled: stop") {
					t.Errorf("cancelled %+v", r)
				}
			}
		}
		if n != canceled.Canceled || n == 0 {
			t.Errorf("calls.cancel answered %d, results say %d call-canceled", canceled.Canceled, n)
		}
		// Those the run held when GET looked were handed over or not by the
		// run; none was made up by the cancel. (A recipient reserved after
		// the GET is the run's too, so only these are checked.)
		for _, w := range v.Waiting {
			if w.State == postroom.WaitingSending && callCanceled(done.Results[w.Index]) {
				t.Errorf("recipient %d, being sent at the cancel, became %+v", w.Index, done.Results[w.Index])
			}
		}
	})
}

// callCanceled reports whether a result read back from JSON, where a
// Result's Code is the start of its reason, is a cancelled call's.
func callCanceled(r postroom.Result) bool {
	return strings.HasPrefix(r.Reason, string(outbox.ReasonCallCanceled)+":") || r.Reason == string(outbox.ReasonCallCanceled)
}
