package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/testkit/pgtest"
	"github.com/postroom/postroom/sqldb/pgxdb"
	"github.com/postroom/postroom/suppression"
	"github.com/postroom/postroom/transport"
)

// rejectsAnswer is an answer of a rejects endpoint.
type rejectsAnswer struct {
	status int
	next   string // the NextCursorHeader
	body   []byte
}

// postJSON posts v as JSON to url.
func postJSON(t *testing.T, url string, v any) rejectsAnswer {
	t.Helper()
	body, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return postRaw(t, url, "application/json", body)
}

func postRaw(t *testing.T, url, contentType string, body []byte) rejectsAnswer {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	if _, err := b.ReadFrom(resp.Body); err != nil {
		t.Fatal(err)
	}
	return rejectsAnswer{status: resp.StatusCode, next: resp.Header.Get(NextCursorHeader), body: b.Bytes()}
}

// decode decodes a's body into v, failing the test unless it is status.
func (a rejectsAnswer) decode(t *testing.T, status int, v any) {
	t.Helper()
	if a.status != status {
		t.Fatalf("status %d, body %s; want %d", a.status, a.body, status)
	}
	if err := json.Unmarshal(a.body, v); err != nil {
		t.Fatalf("body %s: %v", a.body, err)
	}
}

// apiErr decodes an error answer and checks its status, code and field.
func (a rejectsAnswer) apiErr(t *testing.T, status int, code, field string) {
	t.Helper()
	var e apiError
	a.decode(t, status, &e)
	if e.Status != "error" || e.Code != code || e.Field != field {
		t.Errorf("error %+v; want %s on %q", e, code, field)
	}
}

func TestRejectsMemory(t *testing.T) {
	list, err := suppression.NewMemory(suppression.Options{})
	if err != nil {
		t.Fatal(err)
	}
	testRejects(t, list)
}

func TestRejectsSQL(t *testing.T) {
	pool, err := pgxpool.New(t.Context(), pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if err := suppression.Migrate(t.Context(), pgxdb.New(pool)); err != nil {
		t.Fatal(err)
	}
	list, err := suppression.NewSQL(pgxdb.New(pool), suppression.Options{})
	if err != nil {
		t.Fatal(err)
	}
	testRejects(t, list)
}

// testRejects manages list over HTTP, with the Mailer's keys, and checks
// that the Mailer's calls over HTTP honour it.
func testRejects(t *testing.T, list suppression.List) {
	mem := transport.NewMemory()
	url, _ := startHandler(t, mem, postroom.Options{Auth: postroom.StaticKeys{"acct": {"k"}, "other": {"k2"}}, Suppressions: list}, Options{Suppressions: list})
	auth := map[string]any{"key": "k", "account_id": "acct"}
	with := func(kv ...any) map[string]any {
		m := map[string]any{}
		for k, v := range auth {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}

	var added rejectsAddAnswer
	postJSON(t, url+RejectsAddPath, with("email", " Ann@Example.com", "comment", "asked by phone")).decode(t, http.StatusOK, &added)
	if added != (rejectsAddAnswer{Email: "ann@example.com", Added: true, rejectsScope: rejectsScope{Scope: "all"}}) {
		t.Errorf("rejects.add = %+v", added)
	}

	// A call over HTTP: the listed recipient is rejected, the other sent.
	send := func() []postroom.Result {
		t.Helper()
		call := smallCall(0)
		call.Recipients = []postroom.Recipient{{Email: "ann@example.com"}, {Email: "bob@example.com"}}
		r := post(t, t.Context(), url+SendPath, "application/json", marshal(t, call))
		if r.Status != http.StatusOK {
			t.Fatalf("send: %d %s", r.Status, r.Body)
		}
		return r.Results
	}
	results := send()
	if results[0].Status != postroom.StatusRejected || !strings.HasPrefix(results[0].Reason, "manual: suppressed since ") || !strings.HasSuffix(results[0].Reason, ": asked by phone") || results[1].Status != postroom.StatusSent {
		t.Errorf("send = %+v; want ann rejected (manual, with the comment), bob sent", results)
	}
	if mem.Len() != 1 {
		t.Errorf("%d messages; want bob's alone", mem.Len())
	}

	var entries []map[string]any
	postJSON(t, url+RejectsListPath, with("email", "ANN")).decode(t, http.StatusOK, &entries)
	if len(entries) != 1 || entries[0]["email"] != "ann@example.com" || entries[0]["reason"] != "manual" || entries[0]["detail"] != "asked by phone" ||
		entries[0]["expires_at"] != nil || entries[0]["expired"] != false || entries[0]["created_at"] == nil || entries[0]["scope"] != "all" || entries[0]["list"] != nil {
		t.Errorf("rejects.list = %v", entries)
	}
	// Another account sees none of it.
	postJSON(t, url+RejectsListPath, map[string]any{"key": "k2", "account_id": "other"}).decode(t, http.StatusOK, &entries)
	if len(entries) != 0 {
		t.Errorf("another account's list: %v; want empty", entries)
	}

	// Pages.
	for _, a := range []string{"b1@example.com", "b2@example.com", "b3@example.com", "b4@example.com", "b5@example.com"} {
		postJSON(t, url+RejectsAddPath, with("email", a)).decode(t, http.StatusOK, &added)
	}
	var all []string
	cursor := ""
	for pages := 0; ; pages++ {
		if pages == 4 {
			t.Fatal("more than 3 pages of 2 for 6 entries")
		}
		a := postJSON(t, url+RejectsListPath, with("limit", 2, "cursor", cursor))
		a.decode(t, http.StatusOK, &entries)
		for _, e := range entries {
			all = append(all, e["email"].(string))
		}
		if a.next == "" {
			break
		}
		cursor = a.next
	}
	if strings.Join(all, " ") != "ann@example.com b1@example.com b2@example.com b3@example.com b4@example.com b5@example.com" {
		t.Errorf("pages listed %v", all)
	}

	var deleted rejectsDeleteAnswer
	for _, want := range []bool{true, false} {
		postJSON(t, url+RejectsDeletePath, with("email", "ann@example.com")).decode(t, http.StatusOK, &deleted)
		if deleted != (rejectsDeleteAnswer{Email: "ann@example.com", Deleted: want}) {
			t.Errorf("rejects.delete = %+v; want deleted %v", deleted, want)
		}
	}
	if results := send(); results[0].Status != postroom.StatusSent {
		t.Errorf("after rejects.delete: %+v; want ann sent", results[0])
	}

	t.Run("refused", func(t *testing.T) {
		postJSON(t, url+RejectsAddPath, map[string]any{"key": "wrong", "account_id": "acct", "email": "x@example.com"}).apiErr(t, http.StatusUnauthorized, "invalid_key", "")
		postJSON(t, url+RejectsListPath, map[string]any{"account_id": "acct"}).apiErr(t, http.StatusUnauthorized, "invalid_key", "")
		postJSON(t, url+RejectsAddPath, with("email", "not an address")).apiErr(t, http.StatusBadRequest, "validation_error", "email")
		postJSON(t, url+RejectsListPath, with("cursor", "!")).apiErr(t, http.StatusBadRequest, "validation_error", "cursor")
		postJSON(t, url+RejectsListPath, with("reason", "bounced")).apiErr(t, http.StatusBadRequest, "validation_error", "reason")
		postJSON(t, url+RejectsAddPath, with("email", "x@example.com", "subaccount", "s")).apiErr(t, http.StatusBadRequest, "invalid_json", "")
		postJSON(t, url+RejectsListPath, with("limit", "ten")).apiErr(t, http.StatusBadRequest, "invalid_json", "limit")
		postRaw(t, url+RejectsDeletePath, "application/json", []byte(`{"key":`)).apiErr(t, http.StatusBadRequest, "invalid_json", "")
		postRaw(t, url+RejectsDeletePath, "text/plain", []byte(`{}`)).apiErr(t, http.StatusUnsupportedMediaType, "unsupported_media_type", "")
		postRaw(t, url+RejectsAddPath, "application/json", bytes.Repeat([]byte(" "), maxRejectsBody+1)).apiErr(t, http.StatusRequestEntityTooLarge, "too_large", "")
		r := do(t, t.Context(), http.MethodGet, url+RejectsListPath, "", nil)
		if r.Status != http.StatusMethodNotAllowed || r.Allow != http.MethodPost || r.Error.Code != "method_not_allowed" {
			t.Errorf("GET: %d %q %+v", r.Status, r.Allow, r.Error)
		}
		postJSON(t, url+RejectsAddPath, with("email", "x@example.com", "scope", "everything")).apiErr(t, http.StatusBadRequest, "validation_error", "scope")
		postJSON(t, url+RejectsAddPath, with("email", "x@example.com", "scope", "list")).apiErr(t, http.StatusBadRequest, "validation_error", "list")
		postJSON(t, url+RejectsAddPath, with("email", "x@example.com", "scope", "list", "list", "news")).apiErr(t, http.StatusBadRequest, "validation_error", "list")
		postJSON(t, url+RejectsAddPath, with("email", "x@example.com", "scope", "all", "list", "news.example.com")).apiErr(t, http.StatusBadRequest, "validation_error", "list")
		postJSON(t, url+RejectsListPath, with("scope", "everything")).apiErr(t, http.StatusBadRequest, "validation_error", "scope")
		postJSON(t, url+RejectsListPath, with("list", "news..example.com")).apiErr(t, http.StatusBadRequest, "validation_error", "list")
		postJSON(t, url+RejectsDeletePath, with("email", "x@example.com", "scope", "everything")).apiErr(t, http.StatusBadRequest, "validation_error", "scope")
		postJSON(t, url+RejectsDeletePath, with("email", "x@example.com", "list", "news.example.com")).apiErr(t, http.StatusBadRequest, "validation_error", "list")
		postJSON(t, url+RejectsAddPath, with("email", "x@example.com", "scope", 1)).apiErr(t, http.StatusBadRequest, "invalid_json", "scope")
		// Nothing refused was added.
		postJSON(t, url+RejectsListPath, with("email", "x@")).decode(t, http.StatusOK, &entries)
		if len(entries) != 0 {
			t.Errorf("refused adds listed %v", entries)
		}
	})

	t.Run("scopes", func(t *testing.T) { testRejectsScopes(t, url, mem, with) })
}

// testRejectsScopes adds, lists and deletes entries of each scope over
// HTTP, and checks which of the calls over HTTP each entry rejects: a
// list's entry its list's mail, an all-lists entry every list's mail, and
// neither the receipts.
func testRejectsScopes(t *testing.T, url string, mem *transport.Memory, with func(kv ...any) map[string]any) {
	const news, deals = "news.shop.example.com", "deals.shop.example.com"
	var added rejectsAddAnswer
	postJSON(t, url+RejectsAddPath, with("email", "cy@example.com", "scope", "list", "list", "<News.Shop.Example.com>", "comment", "asked")).decode(t, http.StatusOK, &added)
	if added != (rejectsAddAnswer{Email: "cy@example.com", Added: true, rejectsScope: rejectsScope{Scope: "list", List: news}}) {
		t.Errorf("rejects.add of a list = %+v", added)
	}
	postJSON(t, url+RejectsAddPath, with("email", "cy@example.com", "scope", "list", "list", deals)).decode(t, http.StatusOK, &added)
	added = rejectsAddAnswer{}
	postJSON(t, url+RejectsAddPath, with("email", "dee@example.com", "scope", "lists")).decode(t, http.StatusOK, &added)
	if added.Scope != "lists" || added.List != "" {
		t.Errorf("rejects.add of all lists = %+v", added)
	}
	// What each call rejects: cy news's and deals's mail, dee every list's.
	send := func(list string) string {
		t.Helper()
		call := smallCall(0)
		call.Recipients = []postroom.Recipient{{Email: "cy@example.com"}, {Email: "dee@example.com"}}
		if list != "" {
			call.Message.Headers = append(call.Message.Headers, postroom.ListID("", list))
		}
		r := post(t, t.Context(), url+SendPath, "application/json", marshal(t, call))
		if r.Status != http.StatusOK {
			t.Fatalf("send: %d %s", r.Status, r.Body)
		}
		out := ""
		for _, res := range r.Results {
			code, _, _ := strings.Cut(res.Reason, ":")
			out += fmt.Sprintf("%s %s %s; ", res.Email, res.Status, code)
		}
		return out
	}
	for _, tt := range []struct{ list, want string }{
		{news, "cy@example.com rejected manual; dee@example.com rejected manual; "},
		{"other.shop.example.com", "cy@example.com sent ; dee@example.com rejected manual; "},
		{"", "cy@example.com sent ; dee@example.com sent ; "},
	} {
		if got := send(tt.list); got != tt.want {
			t.Errorf("a call of list %q: %s; want %s", tt.list, got, tt.want)
		}
	}

	var entries []rejectsEntry
	postJSON(t, url+RejectsListPath, with("email", "cy@")).decode(t, http.StatusOK, &entries)
	if len(entries) != 2 || entries[0].Scope != "list" || entries[0].List != deals || entries[1].List != news || entries[1].Detail != "asked" {
		t.Errorf("rejects.list of cy = %+v; want deals's and news's entries, in that order", entries)
	}
	postJSON(t, url+RejectsListPath, with("list", news)).decode(t, http.StatusOK, &entries)
	if len(entries) != 1 || entries[0].Email != "cy@example.com" || entries[0].List != news {
		t.Errorf("rejects.list of news = %+v; want cy's entry", entries)
	}
	postJSON(t, url+RejectsListPath, with("scope", "lists")).decode(t, http.StatusOK, &entries)
	if len(entries) != 1 || entries[0].Email != "dee@example.com" || entries[0].Scope != "lists" {
		t.Errorf("rejects.list of scope lists = %+v; want dee's entry", entries)
	}

	var deleted rejectsDeleteAnswer
	postJSON(t, url+RejectsDeletePath, with("email", "cy@example.com", "scope", "list", "list", news)).decode(t, http.StatusOK, &deleted)
	if deleted != (rejectsDeleteAnswer{Email: "cy@example.com", Deleted: true, rejectsScope: rejectsScope{Scope: "list", List: news}}) {
		t.Errorf("rejects.delete of news's entry = %+v", deleted)
	}
	deleted = rejectsDeleteAnswer{}
	postJSON(t, url+RejectsDeletePath, with("email", "dee@example.com", "scope", "all")).decode(t, http.StatusOK, &deleted)
	if deleted.Deleted {
		t.Errorf("rejects.delete of an all-mail entry dee has not = %+v; want deleted false", deleted)
	}
	if got, want := send(news), "cy@example.com sent ; dee@example.com rejected manual; "; got != want {
		t.Errorf("news after its entry's delete: %s; want %s", got, want)
	}
	deleted = rejectsDeleteAnswer{}
	postJSON(t, url+RejectsDeletePath, with("email", "cy@example.com")).decode(t, http.StatusOK, &deleted)
	if !deleted.Deleted || deleted.Scope != "" {
		t.Errorf("rejects.delete of every entry = %+v", deleted)
	}
	if got, want := send(deals), "cy@example.com sent ; dee@example.com rejected manual; "; got != want {
		t.Errorf("deals after cy's delete: %s; want %s", got, want)
	}
}

// TestRejectsNotMounted: without Options.Suppressions the endpoints are
// unknown paths.
func TestRejectsNotMounted(t *testing.T) {
	url, _ := startMailer(t, transport.NewMemory(), postroom.Options{})
	for _, p := range []string{RejectsAddPath, RejectsListPath, RejectsDeletePath} {
		postJSON(t, url+p, map[string]any{"key": "k", "account_id": "acct", "email": "a@example.com"}).apiErr(t, http.StatusNotFound, "not_found", "")
	}
}
