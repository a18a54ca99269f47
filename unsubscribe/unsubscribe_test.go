package unsubscribe_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/suppression"
	"github.com/postroom/postroom/unsubscribe"
)

var (
	oldKey = unsubscribe.Key{ID: "k1", Secret: bytes.Repeat([]byte{1}, 32)}
	newKey = unsubscribe.Key{ID: "k2", Secret: bytes.Repeat([]byte{2}, 32)}
)

// newsList is the list id of the tests' list mail.
const newsList = "news.shop.example.com"

// fixture is an Unsubscriber over a real suppression.Memory, served by a
// real HTTP server, that keeps the observations it records and the
// events it emits.
type fixture struct {
	u    *unsubscribe.Unsubscriber
	list *suppression.Memory
	srv  *httptest.Server
	now  time.Time

	mu           sync.Mutex
	events       []postroom.Event
	observations []suppression.Observation
}

// recording is the fixture's Observer: it keeps each observation and
// passes it to the list.
type recording struct{ f *fixture }

func (r recording) Observe(ctx context.Context, o suppression.Observation) (*suppression.Entry, error) {
	r.f.mu.Lock()
	r.f.observations = append(r.f.observations, o)
	r.f.mu.Unlock()
	return r.f.list.Observe(ctx, o)
}

// recorded returns the observations and events so far.
func (f *fixture) recorded() ([]suppression.Observation, []postroom.Event) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.observations), slices.Clone(f.events)
}

func newFixture(t *testing.T, keys ...unsubscribe.Key) *fixture {
	t.Helper()
	list, err := suppression.NewMemory(suppression.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{list: list, now: time.Date(2026, 11, 28, 5, 0, 0, 0, time.UTC)}
	f.srv = httptest.NewServer(nil)
	t.Cleanup(f.srv.Close)
	f.u, err = unsubscribe.New(unsubscribe.Options{
		Keys:         keys,
		BaseURL:      "https://mail.example.com/u/",
		TTL:          30 * 24 * time.Hour,
		Suppressions: recording{f},
		Logger:       slog.New(slog.DiscardHandler),
		Now:          func() time.Time { return f.now },
		OnEvent: func(_ context.Context, e postroom.Event) {
			f.mu.Lock()
			f.events = append(f.events, e)
			f.mu.Unlock()
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/u/", f.u)
	f.srv.Config.Handler = mux
	return f
}

// url is the test server's URL for token.
func (f *fixture) url(token string) string { return f.srv.URL + "/u/" + token }

// listed returns the reason address is listed for in account, or "".
func (f *fixture) listed(t *testing.T, account, address string) postroom.ReasonCode {
	t.Helper()
	s, err := f.list.Suppressed(t.Context(), account, []string{address}, f.now)
	if err != nil {
		t.Fatal(err)
	}
	if len(s) == 0 {
		return ""
	}
	return s[0].Reason
}

// oneClick POSTs the RFC 8058 form to u.
func oneClick(t *testing.T, u string) (int, string) {
	t.Helper()
	resp, err := http.PostForm(u, url.Values{"List-Unsubscribe": {"One-Click"}})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func get(t *testing.T, method, u string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, u, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestOneClick: a list message's URL; GET and HEAD show the page and
// record nothing; a POST without the one-click field records nothing;
// the RFC 8058 POST unsubscribes the address from the token's list alone
// (the observation's scope and list, the event's list), in its account.
func TestOneClick(t *testing.T) {
	f := newFixture(t, oldKey)
	link, err := f.u.URL("acct-1", "Ann@example.net", "News.Shop.example.com")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(link, "https://mail.example.com/u/") {
		t.Fatalf("URL %s", link)
	}
	token := link[strings.LastIndexByte(link, '/')+1:]

	// GET and HEAD show the page and record nothing.
	code, body := get(t, http.MethodGet, f.url(token))
	if code != 200 || !strings.Contains(body, `<form method="post" id="this-list">`) || !strings.Contains(body, `<form method="post" id="all-lists">`) ||
		!strings.Contains(body, "Ann@example.net") || !strings.Contains(body, newsList) {
		t.Errorf("GET: %d %s", code, body)
	}
	if code, _ := get(t, http.MethodHead, f.url(token)); code != 200 {
		t.Errorf("HEAD: %d", code)
	}
	if r := f.listed(t, "acct-1", "ann@example.net"); r != "" {
		t.Fatalf("listed as %q after GET", r)
	}
	// A POST without the one-click field, or with a scope other than
	// lists, records nothing.
	for _, form := range []string{"x=1", "scope=all", "scope=list", "scope=&List-Unsubscribe=One-Click", "List-Unsubscribe=one-click"} {
		resp, err := http.Post(f.url(token), "application/x-www-form-urlencoded", strings.NewReader(form))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 400 {
			t.Errorf("POST %s: %d, want 400", form, resp.StatusCode)
		}
	}
	if obs, _ := f.recorded(); len(obs) != 0 || f.listed(t, "acct-1", "ann@example.net") != "" {
		t.Fatalf("recorded %+v before the one-click POST", obs)
	}
	// The RFC 8058 POST records it, for the list, in that account only.
	if code, body := oneClick(t, f.url(token)); code != 200 || !strings.Contains(body, "Unsubscribed") || !strings.Contains(body, newsList) {
		t.Errorf("POST: %d %s", code, body)
	}
	if r := f.listed(t, "acct-1", "ann@example.net"); r != postroom.ReasonUnsub {
		t.Errorf("listed as %q, want unsub", r)
	}
	if r := f.listed(t, "acct-2", "ann@example.net"); r != "" {
		t.Errorf("another account lists it as %q", r)
	}
	// Again: harmless.
	if code, _ := oneClick(t, f.url(token)); code != 200 {
		t.Errorf("second POST: %d", code)
	}
	obs, events := f.recorded()
	want := suppression.Observation{AccountID: "acct-1", Address: "Ann@example.net", Kind: suppression.Unsubscribe, At: f.now, List: newsList, Scope: postroom.ScopeList}
	if len(obs) != 2 || obs[0] != want || obs[1] != want {
		t.Errorf("observations %+v, want twice %+v", obs, want)
	}
	wantEvent := postroom.Event{Type: postroom.EventUnsub, AccountID: "acct-1", Email: "Ann@example.net", List: newsList, At: f.now}
	if len(events) != 2 || events[0] != wantEvent {
		t.Errorf("events %+v, want %+v", events, wantEvent)
	}
	if code, _ := get(t, http.MethodPut, f.url(token)); code != 405 {
		t.Errorf("PUT: %d, want 405", code)
	}
}

func TestMultipartPost(t *testing.T) {
	f := newFixture(t, oldKey)
	token, _ := f.u.Token("acct-1", "bob@example.net", newsList)
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	mw.WriteField("List-Unsubscribe", "One-Click")
	mw.Close()
	resp, err := http.Post(f.url(token), mw.FormDataContentType(), &body)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || f.listed(t, "acct-1", "bob@example.net") != postroom.ReasonUnsub {
		t.Errorf("multipart POST: %d, listed %q", resp.StatusCode, f.listed(t, "acct-1", "bob@example.net"))
	}
}

func TestTamperedTokens(t *testing.T) {
	f := newFixture(t, oldKey)
	token, _ := f.u.Token("acct-1", "ann@example.net", newsList)
	other, _ := f.u.Token("acct-1", "bob@example.net", newsList)
	id, rest, _ := strings.Cut(token, ".")
	payload, sig, _ := strings.Cut(rest, ".")
	_, orest, _ := strings.Cut(other, ".")
	opayload, _, _ := strings.Cut(orest, ".")
	flip := func(s string, i int) string {
		b := []byte(s)
		if b[i] == 'A' {
			b[i] = 'B'
		} else {
			b[i] = 'A'
		}
		return string(b)
	}
	forger, _ := unsubscribe.New(unsubscribe.Options{Keys: []unsubscribe.Key{{ID: "k1", Secret: bytes.Repeat([]byte{9}, 32)}}, Suppressions: f.list})
	forged, _ := forger.Token("acct-1", "carol@example.net", newsList)
	for name, tok := range map[string]string{
		"payload byte changed":      id + "." + flip(payload, 3) + "." + sig,
		"mac byte changed":          id + "." + payload + "." + flip(sig, 2),
		"another token's payload":   id + "." + opayload + "." + sig,
		"unknown key id":            "k9." + payload + "." + sig,
		"signed with another key":   forged,
		"truncated":                 token[:len(token)-4],
		"empty":                     "",
		"no dots":                   "abc",
		"mac of another key length": id + "." + payload + "." + sig + "AA",
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := f.u.Verify(tok); !errors.Is(err, unsubscribe.ErrInvalidToken) {
				t.Errorf("Verify: %v, want ErrInvalidToken", err)
			}
			if code, _ := oneClick(t, f.url(tok)); code != 400 {
				t.Errorf("POST: %d, want 400", code)
			}
		})
	}
	for _, a := range []string{"ann@example.net", "bob@example.net", "carol@example.net"} {
		if r := f.listed(t, "acct-1", a); r != "" {
			t.Errorf("%s listed as %q by a tampered token", a, r)
		}
	}
}

func TestExpiryAndRotation(t *testing.T) {
	old := newFixture(t, oldKey)
	token, _ := old.u.Token("acct-1", "ann@example.net", newsList)

	// The new key signs; the old one still verifies its tokens.
	f := newFixture(t, newKey, oldKey)
	if s, err := f.u.Verify(token); err != nil || s.AccountID != "acct-1" || s.Address != "ann@example.net" || s.List != newsList {
		t.Errorf("old key's token after rotation: %+v %v", s, err)
	}
	fresh, _ := f.u.Token("acct-1", "ann@example.net", newsList)
	if !strings.HasPrefix(fresh, "k2.") {
		t.Errorf("token %s not signed by Keys[0]", fresh)
	}
	// The old key dropped: its tokens are invalid.
	dropped := newFixture(t, newKey)
	if _, err := dropped.u.Verify(token); !errors.Is(err, unsubscribe.ErrInvalidToken) {
		t.Errorf("old key's token after the key was dropped: %v, want ErrInvalidToken", err)
	}
	// TTL (30 days) later the token has expired.
	f.now = f.now.Add(31 * 24 * time.Hour)
	if s, err := f.u.Verify(token); !errors.Is(err, unsubscribe.ErrExpiredToken) || s.List != newsList {
		t.Errorf("Verify after TTL: %v, want ErrExpiredToken", err)
	}
	if code, _ := oneClick(t, f.url(token)); code != http.StatusGone {
		t.Errorf("POST after TTL: %d, want 410", code)
	}
	if r := f.listed(t, "acct-1", "ann@example.net"); r != "" {
		t.Errorf("an expired token listed the address as %q", r)
	}
}

func TestNewValidates(t *testing.T) {
	list, _ := suppression.NewMemory(suppression.Options{})
	for name, tc := range map[string]struct {
		opts  unsubscribe.Options
		field string
	}{
		"no keys":      {unsubscribe.Options{Suppressions: list}, "Keys"},
		"short secret": {unsubscribe.Options{Keys: []unsubscribe.Key{{ID: "a", Secret: []byte("short")}}, Suppressions: list}, "Keys[0]"},
		"bad id":       {unsubscribe.Options{Keys: []unsubscribe.Key{{ID: "a.b", Secret: oldKey.Secret}}, Suppressions: list}, "Keys[0]"},
		"same id":      {unsubscribe.Options{Keys: []unsubscribe.Key{oldKey, oldKey}, Suppressions: list}, "Keys[1].ID"},
		"http base":    {unsubscribe.Options{Keys: []unsubscribe.Key{oldKey}, BaseURL: "http://x.example/u", Suppressions: list}, "BaseURL"},
		"no list":      {unsubscribe.Options{Keys: []unsubscribe.Key{oldKey}}, "Suppressions"},
		"negative TTL": {unsubscribe.Options{Keys: []unsubscribe.Key{oldKey}, Suppressions: list, TTL: -1}, "TTL"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := unsubscribe.New(tc.opts)
			var oe *postroom.OptionsError
			if !errors.As(err, &oe) || oe.Op != "unsubscribe.New" || oe.Field != "Options."+tc.field {
				t.Errorf("New: %v, want a *postroom.OptionsError for Options.%s", err, tc.field)
			}
		})
	}
}
