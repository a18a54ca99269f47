package unsubscribe_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/mail"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/suppression"
	"github.com/postroom/postroom/transport"
	"github.com/postroom/postroom/unsubscribe"
)

// postForm POSTs form to u and returns the status and the body.
func postForm(t *testing.T, u string, form url.Values) (int, string) {
	t.Helper()
	resp, err := http.PostForm(u, form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// formIDs returns the ids of the page's forms, in order.
func formIDs(body string) []string {
	var ids []string
	for _, part := range strings.Split(body, `<form method="post" id="`)[1:] {
		id, _, _ := strings.Cut(part, `"`)
		ids = append(ids, id)
	}
	return ids
}

var (
	oneClickForm = url.Values{"List-Unsubscribe": {"One-Click"}}
	allListsForm = url.Values{"scope": {"lists"}}
)

// TestPageChoices: what each kind of token's page offers, and what each
// choice's POST records (the observation, the event) and says. A list
// message's token: this list (the one-click form) or all lists; a
// transactional message's token: all mail; a version 1 token: all lists.
func TestPageChoices(t *testing.T) {
	type post struct {
		form      url.Values
		scope     postroom.Scope
		list      string
		doneSays  string
		doneLacks string
	}
	for _, tc := range []struct {
		name  string
		token func(f *fixture) string
		forms []string
		posts []post
	}{
		{
			name:  "list",
			token: func(f *fixture) string { tok, _ := f.u.Token("acct-1", "ann@example.net", newsList); return tok },
			forms: []string{"this-list", "all-lists"},
			posts: []post{
				{oneClickForm, postroom.ScopeList, newsList, "no more messages of the list", "receipts"},
				{allListsForm, postroom.ScopeLists, "", "no more messages of this sender's lists", newsList},
				// The one-click field beside scope=lists: the person's
				// explicit choice wins.
				{url.Values{"List-Unsubscribe": {"One-Click"}, "scope": {"lists"}}, postroom.ScopeLists, "", "this sender's lists", newsList},
			},
		},
		{
			name:  "transactional",
			token: func(f *fixture) string { tok, _ := f.u.Token("acct-1", "ann@example.net", ""); return tok },
			forms: []string{"all-mail"},
			posts: []post{
				{oneClickForm, postroom.ScopeAll, "", "no more mail from this sender", "receipts"},
				// Narrower than the token allows, and harmless.
				{allListsForm, postroom.ScopeLists, "", "this sender's lists", ""},
			},
		},
		{
			name:  "version 1",
			token: func(*fixture) string { return v1Vector },
			forms: []string{"all-lists"},
			posts: []post{
				{oneClickForm, postroom.ScopeLists, "", "this sender's lists", ""},
				{allListsForm, postroom.ScopeLists, "", "this sender's lists", ""},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, oldKey)
			f.now = v1Made
			tok := tc.token(f)
			code, body := get(t, http.MethodGet, f.url(tok))
			if code != http.StatusOK || !slices.Equal(formIDs(body), tc.forms) {
				t.Errorf("GET: %d, forms %q, want %q\n%s", code, formIDs(body), tc.forms, body)
			}
			if obs, _ := f.recorded(); len(obs) != 0 {
				t.Fatalf("GET recorded %+v", obs)
			}
			for i, p := range tc.posts {
				code, body := postForm(t, f.url(tok), p.form)
				if code != http.StatusOK || !strings.Contains(body, `<h1 id="done">Unsubscribed</h1>`) || !strings.Contains(body, p.doneSays) ||
					(p.doneLacks != "" && strings.Contains(body, p.doneLacks)) {
					t.Errorf("POST %s: %d, want 200 saying %q and not %q:\n%s", p.form.Encode(), code, p.doneSays, p.doneLacks, body)
				}
				obs, events := f.recorded()
				if len(obs) != i+1 || len(events) != i+1 {
					t.Fatalf("POST %s: %d observations, %d events, want %d", p.form.Encode(), len(obs), len(events), i+1)
				}
				wantObs := suppression.Observation{AccountID: "acct-1", Address: obs[i].Address, Kind: suppression.Unsubscribe, At: v1Made, Scope: p.scope, List: p.list}
				if !strings.EqualFold(obs[i].Address, "ann@example.net") || obs[i] != wantObs {
					t.Errorf("POST %s: observation %+v, want %+v", p.form.Encode(), obs[i], wantObs)
				}
				if e := events[i]; e.Type != postroom.EventUnsub || e.List != p.list || e.AccountID != "acct-1" {
					t.Errorf("POST %s: event %+v, want unsub of list %q", p.form.Encode(), e, p.list)
				}
			}
		})
	}
}

// TestPageEscapes: a hostile address and list id are shown as text, never
// as markup, on the page and on the page after unsubscribing; the page
// has no script and its policy fetches nothing.
func TestPageEscapes(t *testing.T) {
	f := newFixture(t, oldKey)
	const (
		address = `"<img/src=x/onerror=alert(1)>"@example.com`
		list    = "x'onmouseover=alert`1`//&lt{{.}}.example"
	)
	tok, err := f.u.Token("acct-1", address, list)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(f.url(tok))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	csp := resp.Header.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "form-action 'self'", "frame-ancestors 'none'", "style-src 'sha256-"} {
		if !strings.Contains(csp, want) {
			t.Errorf("Content-Security-Policy %q lacks %q", csp, want)
		}
	}
	if strings.Contains(csp, "unsafe") || strings.Contains(csp, "script-src") {
		t.Errorf("Content-Security-Policy %q allows more than it should", csp)
	}
	for name, form := range map[string]url.Values{"GET": nil, "this list": oneClickForm, "all lists": allListsForm} {
		var body string
		if form == nil {
			_, body = get(t, http.MethodGet, f.url(tok))
		} else {
			_, body = postForm(t, f.url(tok), form)
		}
		for _, bad := range []string{"<img", "<script", "'onmouseover", "/&lt{{"} {
			if strings.Contains(body, bad) {
				t.Errorf("%s: the page holds %q unescaped:\n%s", name, bad, body)
			}
		}
		if !strings.Contains(body, "&lt;img/src=x/onerror=alert(1)&gt;") {
			t.Errorf("%s: the page does not show the address escaped:\n%s", name, body)
		}
		if name != "all lists" && !strings.Contains(body, "x&#39;onmouseover=alert`1`//&amp;lt{{.}}.example") {
			t.Errorf("%s: the page does not show the list escaped:\n%s", name, body)
		}
	}
}

// TestObserveRefused: an address the suppression list refuses (a
// *postroom.ValidationError) answers 400, which no provider retries; a
// list that fails otherwise answers 503.
func TestObserveRefused(t *testing.T) {
	f := newFixture(t, oldKey)
	tok, _ := f.u.Token("acct-1", `"ann smith"@example.net`, newsList)
	if code, _ := oneClick(t, f.url(tok)); code != http.StatusBadRequest {
		t.Errorf("an address the list refuses: %d, want 400", code)
	}
	u, err := unsubscribe.New(unsubscribe.Options{Keys: []unsubscribe.Key{oldKey}, Suppressions: failing{}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	tok, _ = u.Token("acct-1", "ann@example.net", newsList)
	req := httptest.NewRequest(http.MethodPost, "/u/"+tok, strings.NewReader(oneClickForm.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	w := httptest.NewRecorder()
	u.ServeHTTP(w, req)
	if w.Code != http.StatusServiceUnavailable {
		t.Errorf("a list that fails: %d, want 503", w.Code)
	}
}

// failing is an Observer whose store is down.
type failing struct{}

func (failing) Observe(context.Context, suppression.Observation) (*suppression.Entry, error) {
	return nil, context.DeadlineExceeded
}

// scopedList is a suppression list that keeps each unsubscribe's scope
// and list, as package suppression's lists do: the Observer of an
// Unsubscriber and the Suppressions of a Mailer (which keeps the entries
// that cover a message, postroom.Suppression.Covers).
type scopedList struct {
	mu      sync.Mutex
	entries []postroom.Suppression // of account acct-1
}

func (l *scopedList) Observe(_ context.Context, o suppression.Observation) (*suppression.Entry, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.entries = append(l.entries, postroom.Suppression{Address: strings.ToLower(o.Address), Reason: postroom.ReasonUnsub, Created: o.At, Scope: o.Scope, List: o.List})
	return &suppression.Entry{AccountID: o.AccountID, Address: strings.ToLower(o.Address), Reason: postroom.ReasonUnsub, Scope: o.Scope, List: o.List}, nil
}

func (l *scopedList) Suppressed(_ context.Context, accountID string, addresses []string, _ time.Time) ([]postroom.Suppression, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []postroom.Suppression
	for _, e := range l.entries {
		if accountID == "acct-1" && slices.ContainsFunc(addresses, func(a string) bool { return strings.EqualFold(a, e.Address) }) {
			out = append(out, e)
		}
	}
	return out, nil
}

// store is a suppression list for both sides.
type store interface {
	unsubscribe.Observer
	postroom.Suppressions
}

// TestScopes is the scope table end to end, a Mailer and an Unsubscriber
// on one suppression list: after ann's one-click POST from a message of
// the list news, a news call rejects ann (and sends bob), while a call of
// another list and a receipt reach her; after her "all lists" choice, no
// list call reaches her and a receipt still does.
func TestScopes(t *testing.T) {
	memory := func(t *testing.T) store {
		list, err := suppression.NewMemory(suppression.Options{})
		if err != nil {
			t.Fatal(err)
		}
		// suppression.Memory keeps an unsubscribe's scope from the version
		// whose Observe does: until then its entries silence all mail.
		e, err := list.Observe(t.Context(), suppression.Observation{AccountID: "probe", Address: "probe@example.net", Kind: suppression.Unsubscribe, List: newsList, Scope: postroom.ScopeList})
		if err != nil {
			t.Fatal(err)
		}
		if e == nil || e.Scope != postroom.ScopeList {
			t.Skipf("suppression.Memory does not keep an observation's scope yet (entry %+v)", e)
		}
		return list
	}
	for name, newStore := range map[string]func(*testing.T) store{
		"scoped list":        func(*testing.T) store { return &scopedList{} },
		"suppression.Memory": memory,
	} {
		t.Run(name, func(t *testing.T) {
			list := newStore(t)
			u, err := unsubscribe.New(unsubscribe.Options{Keys: []unsubscribe.Key{oldKey}, BaseURL: "https://mail.example.com/u/", Suppressions: list})
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(http.StripPrefix("/u", u))
			t.Cleanup(srv.Close)
			mem := transport.NewMemory()
			m, err := postroom.New(mem, postroom.Options{Auth: postroom.NoAuth{}, Suppressions: list, Unsubscribe: u})
			if err != nil {
				t.Fatal(err)
			}
			send := func(list string) []postroom.Result {
				t.Helper()
				c := &postroom.Call{AccountID: "acct-1", Message: postroom.Message{FromEmail: "shop@shop.example.com", Subject: "Hi", Text: "Hello."},
					Recipients: []postroom.Recipient{{Email: "ann@example.net"}, {Email: "bob@example.net"}}}
				if list != "" {
					c.Message.Headers = []postroom.Header{postroom.ListID("", list)}
				}
				results, err := m.Send(t.Context(), c)
				if err != nil {
					t.Fatal(err)
				}
				return results
			}
			check := func(when, list string, annSent bool) {
				t.Helper()
				r := send(list)
				if got := r[0].Status == postroom.StatusSent; got != annSent || (!annSent && r[0].Code != postroom.ReasonUnsub) {
					t.Errorf("%s: a call of list %q to ann: %s %q, want sent %v", when, list, r[0].Status, r[0].Reason, annSent)
				}
				if r[1].Status != postroom.StatusSent {
					t.Errorf("%s: a call of list %q to bob: %s %q, want sent", when, list, r[1].Status, r[1].Reason)
				}
			}
			// ann's news message's URL, as its List-Unsubscribe has it.
			r := send(newsList)
			env, _ := mem.Envelope(r[0].SendID)
			msg, err := mail.ReadMessage(bytes.NewReader(env.Data))
			if err != nil {
				t.Fatal(err)
			}
			link := strings.Trim(strings.Join(strings.Fields(msg.Header.Get("List-Unsubscribe")), ""), "<>")
			tok, ok := strings.CutPrefix(link, "https://mail.example.com/u/")
			if !ok {
				t.Fatalf("ann's news message has List-Unsubscribe %q", link)
			}

			if code, _ := oneClick(t, srv.URL+"/u/"+tok); code != http.StatusOK {
				t.Fatalf("one-click POST: %d", code)
			}
			check("after the one-click POST", newsList, false)
			check("after the one-click POST", "deals.shop.example.com", true)
			check("after the one-click POST", "", true)

			if code, _ := postForm(t, srv.URL+"/u/"+tok, allListsForm); code != http.StatusOK {
				t.Fatalf("all lists POST: %d", code)
			}
			check("after all lists", newsList, false)
			check("after all lists", "deals.shop.example.com", false)
			check("after all lists", "", true)
		})
	}
}
