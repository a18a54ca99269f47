package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/httpapi"
)

// requireToken is the application's own authentication middleware: it
// lets a request through only with its bearer token.
func requireToken(token string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// The Handler is mounted under the application's mux, behind its own
// authentication; the application's other routes stay its own.
func Example() {
	discard := postroom.TransportFunc(func(context.Context, *postroom.Envelope) error { return nil })
	// The middleware authenticates callers, so the Mailer checks no key.
	m, err := postroom.New(discard, postroom.Options{Auth: postroom.NoAuth{}})
	if err != nil {
		panic(err)
	}
	api, err := httpapi.New(m, httpapi.Options{NoTemplateStore: true})
	if err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/api/1.0/", requireToken("s3cret", api))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "ok") })

	srv := httptest.NewServer(mux) // an http.Server with timeouts in production
	defer srv.Close()

	send := func(token string) {
		body := `{"account_id": "shop", "message": {"from_email": "orders@shop.example.com",
			"subject": "Order {{order}}", "text": "Hello {{name}}, order {{order}} has shipped."},
			"recipients": [{"email": "ann@example.org", "params": {"name": "Ann", "order": 1042}}]}`
		req, err := http.NewRequest(http.MethodPost, srv.URL+httpapi.SendPath, strings.NewReader(body))
		if err != nil {
			panic(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			panic(err)
		}
		defer resp.Body.Close()
		var results []postroom.Result
		if resp.StatusCode == http.StatusOK {
			if err := json.NewDecoder(resp.Body).Decode(&results); err != nil {
				panic(err)
			}
		}
		fmt.Print(resp.StatusCode)
		for _, r := range results {
			fmt.Print(" ", r.Email, " ", r.Status)
		}
		fmt.Println()
	}
	send("s3cret")
	send("wrong")
	// Output:
	// 200 ann@example.org sent
	// 401
}
