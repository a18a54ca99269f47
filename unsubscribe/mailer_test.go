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
				{Name: "List-Unsubscribe", Value: "<{{unsubscribe_url}}>"},
				{Name: "List-Unsubscribe-Post", Value: "List-Unsubscribe=One-Click"},
			},
		}}
		for _, a := range []string{"ann@example.net", "bob@example.net"} {
			link, err := f.u.URL("acct-1", a)
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
