package unsubscribe_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/mail"
	"net/url"
	"strings"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/suppression"
	"github.com/postroom/postroom/transport"
	"github.com/postroom/postroom/unsubscribe"
)

func Example() {
	list, _ := suppression.NewMemory(suppression.Options{})
	u, err := unsubscribe.New(unsubscribe.Options{
		Keys:         []unsubscribe.Key{{ID: "2026", Secret: bytes.Repeat([]byte{7}, 32)}}, // random bytes in practice
		BaseURL:      "https://example.com/unsubscribe/",
		Suppressions: list,
	})
	if err != nil {
		panic(err)
	}
	// The URL for a recipient's List-Unsubscribe header.
	link, _ := u.URL("acct-1", "ann@example.net", "")
	fmt.Println(strings.HasPrefix(link, "https://example.com/unsubscribe/2026."))

	// Serve it; the mailbox provider POSTs the RFC 8058 form.
	mux := http.NewServeMux()
	mux.Handle("/unsubscribe/", u)
	body := strings.NewReader(url.Values{"List-Unsubscribe": {"One-Click"}}.Encode())
	req := httptest.NewRequest(http.MethodPost, link, body)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	w := httptest.NewRecorder()
	mux.ServeHTTP(w, req)
	fmt.Println(w.Code)

	s, _ := list.Suppressed(req.Context(), "acct-1", []string{"ann@example.net"}, time.Now())
	fmt.Println(s[0].Address, s[0].Reason)
	// Output:
	// true
	// 200
	// ann@example.net unsub
}

// An Unsubscriber as the Mailer's Options.Unsubscribe: a call that writes
// no List-Unsubscribe header gets one per recipient, with its own URL.
func Example_mailer() {
	list, _ := suppression.NewMemory(suppression.Options{})
	u, _ := unsubscribe.New(unsubscribe.Options{
		Keys:         []unsubscribe.Key{{ID: "2026", Secret: bytes.Repeat([]byte{7}, 32)}}, // random bytes in practice
		BaseURL:      "https://example.com/unsubscribe/",
		Suppressions: list,
	})
	mem := transport.NewMemory()
	m, err := postroom.New(mem, postroom.Options{Auth: postroom.NoAuth{}, Suppressions: list, Unsubscribe: u})
	if err != nil {
		panic(err)
	}
	results, _ := m.Send(context.Background(), &postroom.Call{AccountID: "acct-1",
		Message:    postroom.Message{FromEmail: "news@example.com", Subject: "News", Text: "Hello."},
		Recipients: []postroom.Recipient{{Email: "ann@example.net"}},
	})
	env, _ := mem.Envelope(results[0].SendID)
	msg, _ := mail.ReadMessage(bytes.NewReader(env.Data))
	fmt.Println(strings.HasPrefix(msg.Header.Get("List-Unsubscribe"), "<https://example.com/unsubscribe/2026."))
	fmt.Println(msg.Header.Get("List-Unsubscribe-Post"))
	// Output:
	// true
	// List-Unsubscribe=One-Click
}
