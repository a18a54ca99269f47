package console_test

import (
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/postroom/postroom/console"
	"github.com/postroom/postroom/events"
	"github.com/postroom/postroom/suppression"
)

// The console mounted under /admin/console/ behind the application's own
// authentication (adminOnly), over the stores the application's Mailer
// uses; the account comes from the application's session.
func ExampleNew() {
	activity, err := events.NewMemory(events.MemoryOptions{}) // the Mailer's Options.OnEvent: activity.OnEvent
	if err != nil {
		log.Fatal(err)
	}
	list, err := suppression.NewMemory(suppression.Options{}) // the Mailer's Options.Suppressions
	if err != nil {
		log.Fatal(err)
	}
	c, err := console.New(console.Options{
		Account:      func(r *http.Request) (string, error) { return "shop", nil }, // from the session
		Activity:     activity,
		Suppressions: list,
	})
	if err != nil {
		log.Fatal(err)
	}
	adminOnly := func(h http.Handler) http.Handler { return h } // the application's check of its staff
	mux := http.NewServeMux()
	mux.Handle("/admin/console/", adminOnly(http.StripPrefix("/admin/console", c)))

	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/admin/console/messages?q=ann@example.org", nil))
	fmt.Println(rec.Code, rec.Header().Get("Content-Type"))
	// Output: 200 text/html; charset=utf-8
}
