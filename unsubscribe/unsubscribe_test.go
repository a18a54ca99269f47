package unsubscribe_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
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

// fixture is an Unsubscriber over a real suppression.Memory, served by a
// real HTTP server.
type fixture struct {
	u    *unsubscribe.Unsubscriber
	list *suppression.Memory
	srv  *httptest.Server
	now  time.Time

	mu     sync.Mutex
	events []postroom.Event
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
		Suppressions: list,
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

func TestOneClick(t *testing.T) {
	f := newFixture(t, oldKey)
	link, err := f.u.URL("acct-1", "Ann@example.net", "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(link, "https://mail.example.com/u/") {
		t.Fatalf("URL %s", link)
	}
	token := link[strings.LastIndexByte(link, '/')+1:]

	// GET and HEAD show the page and record nothing.
	code, body := get(t, http.MethodGet, f.url(token))
	if code != 200 || !strings.Contains(body, `<form method="post">`) || !strings.Contains(body, "Ann@example.net") {
		t.Errorf("GET: %d %s", code, body)
	}
	if code, _ := get(t, http.MethodHead, f.url(token)); code != 200 {
		t.Errorf("HEAD: %d", code)
	}
	if r := f.listed(t, "acct-1", "ann@example.net"); r != "" {
		t.Fatalf("listed as %q after GET", r)
	}
	// A POST without the one-click field records nothing.
	resp, err := http.Post(f.url(token), "application/x-www-form-urlencoded", strings.NewReader("x=1"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 || f.listed(t, "acct-1", "ann@example.net") != "" {
		t.Errorf("POST without List-Unsubscribe=One-Click: %d, listed %q", resp.StatusCode, f.listed(t, "acct-1", "ann@example.net"))
	}
	// The RFC 8058 POST records it, in that account only.
	if code, body := oneClick(t, f.url(token)); code != 200 || !strings.Contains(body, "Unsubscribed") {
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
	f.mu.Lock()
	if len(f.events) != 2 || f.events[0].Type != postroom.EventUnsub || f.events[0].AccountID != "acct-1" || f.events[0].Email != "Ann@example.net" {
		t.Errorf("events %+v", f.events)
	}
	f.mu.Unlock()
	if code, _ := get(t, http.MethodPut, f.url(token)); code != 405 {
		t.Errorf("PUT: %d, want 405", code)
	}
}

func TestMultipartPost(t *testing.T) {
	f := newFixture(t, oldKey)
	token, _ := f.u.Token("acct-1", "bob@example.net")
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
	token, _ := f.u.Token("acct-1", "ann@example.net")
	other, _ := f.u.Token("acct-1", "bob@example.net")
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
	forged, _ := forger.Token("acct-1", "carol@example.net")
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
			if _, _, err := f.u.Verify(tok); !errors.Is(err, unsubscribe.ErrInvalidToken) {
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
	token, _ := old.u.Token("acct-1", "ann@example.net")

	// The new key signs; the old one still verifies its tokens.
	f := newFixture(t, newKey, oldKey)
	if acct, addr, err := f.u.Verify(token); err != nil || acct != "acct-1" || addr != "ann@example.net" {
		t.Errorf("old key's token after rotation: %s %s %v", acct, addr, err)
	}
	fresh, _ := f.u.Token("acct-1", "ann@example.net")
	if !strings.HasPrefix(fresh, "k2.") {
		t.Errorf("token %s not signed by Keys[0]", fresh)
	}
	// The old key dropped: its tokens are invalid.
	dropped := newFixture(t, newKey)
	if _, _, err := dropped.u.Verify(token); !errors.Is(err, unsubscribe.ErrInvalidToken) {
		t.Errorf("old key's token after the key was dropped: %v, want ErrInvalidToken", err)
	}
	// TTL (30 days) later the token has expired.
	f.now = f.now.Add(31 * 24 * time.Hour)
	if _, _, err := f.u.Verify(token); !errors.Is(err, unsubscribe.ErrExpiredToken) {
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
		"same id":      {unsubscribe.Options{Keys: []unsubscribe.Key{oldKey, oldKey}, Suppressions: list}, "Keys[1]"},
		"http base":    {unsubscribe.Options{Keys: []unsubscribe.Key{oldKey}, BaseURL: "http://x.example/u", Suppressions: list}, "BaseURL"},
		"no list":      {unsubscribe.Options{Keys: []unsubscribe.Key{oldKey}}, "Suppressions"},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := unsubscribe.New(tc.opts); err == nil || !strings.Contains(err.Error(), tc.field) {
				t.Errorf("New: %v, want an error naming %s", err, tc.field)
			}
		})
	}
}

// FuzzVerify: no input panics, and a token that verifies is exactly the
// one the key makes for its claims (nothing else is accepted).
func FuzzVerify(f *testing.F) {
	list, _ := suppression.NewMemory(suppression.Options{})
	now := time.Date(2026, 11, 28, 5, 0, 0, 0, time.UTC)
	u, _ := unsubscribe.New(unsubscribe.Options{Keys: []unsubscribe.Key{oldKey}, Suppressions: list, Now: func() time.Time { return now }})
	tok, _ := u.Token("acct-1", "ann@example.net")
	f.Add(tok)
	f.Add("k1..")
	f.Add("k1.AQ.AA")
	f.Fuzz(func(t *testing.T, token string) {
		acct, addr, err := u.Verify(token)
		if err != nil {
			return
		}
		if again, _ := u.Token(acct, addr); again != token {
			t.Errorf("Verify accepted %q, which is not the token of (%q, %q): %q", token, acct, addr, again)
		}
	})
}
