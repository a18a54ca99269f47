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
	// The URL for a recipient's List-Unsubscribe header in a message of
	// the list news.example.com.
	link, _ := u.URL("acct-1", "ann@example.net", "news.example.com")
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

// An Unsubscriber as the Mailer's Options.Unsubscribe: a list call (its
// List-Id names the list) that writes no List-Unsubscribe header gets one
// per recipient, with its own URL for the list; a transactional call,
// such as a receipt, gets none.
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
	for _, headers := range [][]postroom.Header{
		{postroom.ListID("Example news", "news.example.com")}, // a newsletter
		nil, // a receipt
	} {
		results, _ := m.Send(context.Background(), &postroom.Call{AccountID: "acct-1",
			Message:    postroom.Message{FromEmail: "news@example.com", Subject: "Hello", Text: "Hello.", Headers: headers},
			Recipients: []postroom.Recipient{{Email: "ann@example.net"}},
		})
		env, _ := mem.Envelope(results[0].SendID)
		msg, _ := mail.ReadMessage(bytes.NewReader(env.Data))
		link := strings.Trim(msg.Header.Get("List-Unsubscribe"), "<>")
		if link == "" {
			fmt.Println("transactional: no List-Unsubscribe")
			continue
		}
		s, _ := u.Verify(strings.TrimPrefix(link, "https://example.com/unsubscribe/"))
		fmt.Println(msg.Header.Get("List-Unsubscribe-Post"), s.List, s.Scope)
	}
	// Output:
	// List-Unsubscribe=One-Click news.example.com list
	// transactional: no List-Unsubscribe
}
