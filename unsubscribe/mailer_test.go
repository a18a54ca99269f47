package unsubscribe_test

import (
	"bytes"
	"net/http"
	"net/mail"
	"strings"
	"testing"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/transport"
)

// TestMailerEndToEnd: a call writes each recipient's one-click URL (from
// URL, as a param) into List-Unsubscribe; the test reads the header back
// from the message the transport got, makes the provider's RFC 8058 POST
// to it, and the next call rejects the address as unsub.
func TestMailerEndToEnd(t *testing.T) {
	f := newFixture(t, oldKey)
	mem := transport.NewMemory()
	m, err := postroom.New(mem, postroom.Options{Auth: postroom.NoAuth{}, Suppressions: f.list})
	if err != nil {
		t.Fatal(err)
	}
	call := func() *postroom.Call {
		c := &postroom.Call{AccountID: "acct-1", Message: postroom.Message{
			FromEmail: "news@shop.example.com", Subject: "News", Text: "Hello.",
			Headers: []postroom.Header{
				postroom.ListID("Shop news", newsList),
				{Name: "List-Unsubscribe", Value: "<{{unsubscribe_url}}>"},
				{Name: "List-Unsubscribe-Post", Value: "List-Unsubscribe=One-Click"},
			},
		}}
		for _, a := range []string{"ann@example.net", "bob@example.net"} {
			link, err := f.u.URL("acct-1", a, newsList)
			if err != nil {
				t.Fatal(err)
			}
			c.Recipients = append(c.Recipients, postroom.Recipient{Email: a, Params: postroom.Params{"unsubscribe_url": link}})
		}
		return c
	}
	results, err := m.Send(t.Context(), call())
	if err != nil {
		t.Fatal(err)
	}
	env, ok := mem.Envelope(results[0].SendID)
	if !ok {
		t.Fatal("no message for ann")
	}
	msg, err := mail.ReadMessage(bytes.NewReader(env.Data))
	if err != nil {
		t.Fatal(err)
	}
	if msg.Header.Get("List-Unsubscribe-Post") != "List-Unsubscribe=One-Click" {
		t.Fatalf("List-Unsubscribe-Post %q", msg.Header.Get("List-Unsubscribe-Post"))
	}
	link := strings.Trim(strings.Join(strings.Fields(msg.Header.Get("List-Unsubscribe")), ""), "<>")
	const base = "https://mail.example.com/u/"
	if !strings.HasPrefix(link, base) {
		t.Fatalf("List-Unsubscribe %q", link)
	}
	// The provider POSTs to the URL (here the test server serving it).
	if code, _ := oneClick(t, f.url(strings.TrimPrefix(link, base))); code != http.StatusOK {
		t.Fatalf("POST: %d", code)
	}

	results, err = m.Send(t.Context(), call())
	if err != nil {
		t.Fatal(err)
	}
	if r := results[0]; r.Status != postroom.StatusRejected || r.Code != postroom.ReasonUnsub {
		t.Errorf("ann after unsubscribing: %s %q, want rejected unsub", r.Status, r.Reason)
	}
	if r := results[1]; r.Status != postroom.StatusSent {
		t.Errorf("bob: %s %q, want sent", r.Status, r.Reason)
	}
}

// TestMailerOption: with Options.Unsubscribe set to the Unsubscriber, a
// list call that writes no List-Unsubscribe header gets one per recipient
// with its own URL for the list, and List-Unsubscribe-Post; a
// transactional call gets neither. The provider's RFC 8058 POST to the
// URL lists the address as unsub for that list, and the next call of
// the list rejects it.
func TestMailerOption(t *testing.T) {
	f := newFixture(t, oldKey)
	mem := transport.NewMemory()
	m, err := postroom.New(mem, postroom.Options{Auth: postroom.NoAuth{}, Suppressions: f.list, Unsubscribe: f.u})
	if err != nil {
		t.Fatal(err)
	}
	call := func(list bool) *postroom.Call {
		c := &postroom.Call{AccountID: "acct-1", Message: postroom.Message{
			FromEmail: "news@shop.example.com", Subject: "News", Text: "Hello.",
		}, Recipients: []postroom.Recipient{{Email: "Ann@example.net"}, {Email: "bob@example.net"}}}
		if list {
			c.Message.Headers = []postroom.Header{postroom.ListID("Shop news", "News.Shop.example.com")}
		}
		return c
	}
	// A receipt gets no one-click header.
	results, err := m.Send(t.Context(), call(false))
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range results {
		env, ok := mem.Envelope(r.SendID)
		if r.Status != postroom.StatusSent || !ok {
			t.Fatalf("transactional recipient %d: %s %q", i, r.Status, r.Reason)
		}
		msg, err := mail.ReadMessage(bytes.NewReader(env.Data))
		if err != nil {
			t.Fatal(err)
		}
		if got := msg.Header["List-Unsubscribe"]; got != nil {
			t.Errorf("transactional recipient %d: List-Unsubscribe %q", i, got)
		}
		if got := msg.Header["List-Unsubscribe-Post"]; got != nil {
			t.Errorf("transactional recipient %d: List-Unsubscribe-Post %q", i, got)
		}
	}

	results, err = m.Send(t.Context(), call(true))
	if err != nil {
		t.Fatal(err)
	}
	const base = "https://mail.example.com/u/"
	links := make([]string, len(results))
	for i, r := range results {
		if r.Status != postroom.StatusSent {
			t.Fatalf("recipient %d: %s %q", i, r.Status, r.Reason)
		}
		env, ok := mem.Envelope(r.SendID)
		if !ok {
			t.Fatalf("no message for recipient %d", i)
		}
		msg, err := mail.ReadMessage(bytes.NewReader(env.Data))
		if err != nil {
			t.Fatal(err)
		}
		if got := msg.Header.Get("List-Unsubscribe-Post"); got != "List-Unsubscribe=One-Click" {
			t.Fatalf("recipient %d: List-Unsubscribe-Post %q", i, got)
		}
		links[i] = strings.Trim(strings.Join(strings.Fields(msg.Header.Get("List-Unsubscribe")), ""), "<>")
		if !strings.HasPrefix(links[i], base) {
			t.Fatalf("recipient %d: List-Unsubscribe %q", i, links[i])
		}
	}
	s, err := f.u.Verify(strings.TrimPrefix(links[0], base))
	if err != nil || s.AccountID != "acct-1" || !strings.EqualFold(s.Address, "ann@example.net") || s.List != newsList || s.Scope != postroom.ScopeList {
		t.Fatalf("ann's token names %+v (%v), want acct-1, ann, list %s", s, err, newsList)
	}
	if links[0] == links[1] {
		t.Fatal("ann and bob got the same URL")
	}
	if got := f.listed(t, "acct-1", "ann@example.net"); got != "" {
		t.Fatalf("ann listed as %q before any POST", got)
	}
	// The provider POSTs to the URL (here the test server serving it).
	if code, body := oneClick(t, f.url(strings.TrimPrefix(links[0], base))); code != http.StatusOK {
		t.Fatalf("POST: %d %s", code, body)
	}
	if got := f.listed(t, "acct-1", "ann@example.net"); got != postroom.ReasonUnsub {
		t.Fatalf("ann listed as %q, want unsub", got)
	}
	if obs, _ := f.recorded(); len(obs) != 1 || obs[0].Scope != postroom.ScopeList || obs[0].List != newsList {
		t.Fatalf("observations %+v, want one of list %s", obs, newsList)
	}

	results, err = m.Send(t.Context(), call(true))
	if err != nil {
		t.Fatal(err)
	}
	if r := results[0]; r.Status != postroom.StatusRejected || r.Code != postroom.ReasonUnsub {
		t.Errorf("ann after unsubscribing: %s %q, want rejected unsub", r.Status, r.Reason)
	}
	if r := results[1]; r.Status != postroom.StatusSent {
		t.Errorf("bob: %s %q, want sent", r.Status, r.Reason)
	}
}
