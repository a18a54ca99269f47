package main

// The console (-console): package console's pages at /console/, for the
// people who run the server. A browser cannot send the API's key header,
// so the console asks for HTTP basic authentication: the user name is an
// account id and the password one of its keys (-keys), the same pair a
// call gives. With -no-auth any password is taken, and the user name
// still says whose mail the console shows. Basic authentication sends the
// key with every request: serve the console over TLS (a reverse proxy in
// front of this program) anywhere but on a developer's machine.

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/console"
	"github.com/postroom/postroom/events"
	"github.com/postroom/postroom/httpapi"
	"github.com/postroom/postroom/preview"
	"github.com/postroom/postroom/templatestore"
)

// consolePath is where -console serves the console.
const consolePath = "/console/"

// consoleRealm is the basic authentication realm the browser shows.
const consoleRealm = "postroom console: your account id and one of its keys"

// withConsole returns api with the console mounted at consolePath,
// behind basic authentication checked by opts.Auth. The console shows
// the server's event log (message activity), its suppression list, its
// queued calls (async, when it is package outbox's), its managed
// templates, and the preview page. Templates are rendered by a Mailer of
// its own over t and opts with postroom.NoAuth, since the console holds
// no key to give them: the person was authenticated already.
func withConsole(api http.Handler, t postroom.Transport, opts postroom.Options, hr *hearing, managed templatestore.Manager, async httpapi.Async, logger *slog.Logger) (http.Handler, error) {
	auth := opts.Auth
	opts.Auth = postroom.NoAuth{}
	renderer, err := postroom.New(t, opts)
	if err != nil {
		return nil, fmt.Errorf("-console: %w", err)
	}
	page, err := preview.New(renderer, preview.Options{Logger: logger})
	if err != nil {
		return nil, fmt.Errorf("-console: %w", err)
	}
	co := console.Options{
		Account:      consoleAccount,
		Suppressions: hr.list,
		Preview:      page,
		Logger:       logger,
	}
	if a, ok := hr.sends.(events.Activity); ok {
		co.Activity = a
	}
	if c, ok := async.(console.Calls); ok {
		co.Calls = c
	}
	if managed != nil {
		co.Templates, co.Renderer = managed, renderer
	}
	c, err := console.New(co)
	if err != nil {
		return nil, fmt.Errorf("-console: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle(consolePath, basicAuth(auth, http.StripPrefix(consolePath[:len(consolePath)-1], c)))
	mux.Handle("/", api)
	return mux, nil
}

// consoleAccount is the account of a request that basicAuth let through:
// its user name.
func consoleAccount(r *http.Request) (string, error) {
	user, _, ok := r.BasicAuth()
	if !ok || user == "" {
		return "", errors.New("no basic authentication")
	}
	return user, nil
}

// basicAuth serves next to the requests whose basic authentication auth
// accepts, as a call's account id and key, and asks for it otherwise.
func basicAuth(auth postroom.Authenticator, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, key, ok := r.BasicAuth()
		if !ok || user == "" || auth.Authenticate(r.Context(), user, key) != nil {
			w.Header().Set("WWW-Authenticate", `Basic realm="`+consoleRealm+`", charset="UTF-8"`)
			http.Error(w, "the console needs an account id and one of its keys", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}
