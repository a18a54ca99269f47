package unsubscribe

import (
	"errors"
	"html/template"
	"net/http"
	"strings"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/suppression"
)

// maxFormBytes bounds a POST body: the one-click form is 26 bytes.
const maxFormBytes = 4 << 10

// ServeHTTP honours the URL's token, the last segment of the request's
// path:
//
//   - POST with the form field List-Unsubscribe=One-Click (RFC 8058 §3.2,
//     what mailbox providers send, and what the confirmation page's button
//     sends): verifies the token and records the unsubscribe (200, a page
//     saying so). Recording it again is harmless.
//   - GET or HEAD: shows the confirmation page, whose button POSTs the
//     form; it records nothing (link scanners fetch every URL).
//   - A token that is invalid: 400; expired: 410, with a page saying so.
//   - POST without the field: 400. Other methods: 405.
//   - Options.Suppressions failing: 503 (the provider retries).
func (u *Unsubscriber) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Robots-Tag", "noindex")
	w.Header().Set("Referrer-Policy", "no-referrer")
	token := r.URL.Path[strings.LastIndexByte(r.URL.Path, '/')+1:]
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodPost:
	default:
		w.Header().Set("Allow", "GET, HEAD, POST")
		u.page(w, http.StatusMethodNotAllowed, pageData{Message: "This address takes GET and POST only."})
		return
	}
	c, err := verify(u.opts.Keys, token, u.opts.Now())
	switch {
	case errors.Is(err, ErrExpiredToken):
		u.page(w, http.StatusGone, pageData{Message: "This unsubscribe link has expired. Please use the link in a more recent message."})
		return
	case err != nil:
		u.page(w, http.StatusBadRequest, pageData{Message: "This unsubscribe link is not valid."})
		return
	}
	if r.Method != http.MethodPost {
		u.page(w, http.StatusOK, pageData{Address: c.address, Confirm: true})
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseMultipartForm(maxFormBytes); err != nil && !errors.Is(err, http.ErrNotMultipart) {
		u.page(w, http.StatusBadRequest, pageData{Message: "The request could not be read."})
		return
	}
	if r.PostForm.Get("List-Unsubscribe") != "One-Click" {
		u.page(w, http.StatusBadRequest, pageData{Message: "A one-click unsubscribe POSTs List-Unsubscribe=One-Click (RFC 8058)."})
		return
	}
	now := u.opts.Now()
	_, err = u.opts.Suppressions.Observe(r.Context(), suppression.Observation{
		AccountID: c.account, Address: c.address, Kind: suppression.Unsubscribe, At: now,
	})
	if err != nil {
		u.opts.Logger.Error("unsubscribe: recording an unsubscribe failed", "account_id", c.account, "err", err)
		u.page(w, http.StatusServiceUnavailable, pageData{Message: "The unsubscribe could not be recorded now. Please try again later."})
		return
	}
	if u.opts.OnEvent != nil {
		u.opts.OnEvent(r.Context(), postroom.Event{Type: postroom.EventUnsub, AccountID: c.account, Email: c.address, At: now})
	}
	u.page(w, http.StatusOK, pageData{Address: c.address, Done: true})
}

// pageData fills the page.
type pageData struct {
	Address string
	Confirm bool // the confirmation form
	Done    bool // unsubscribed
	Message string
}

// page writes the page with status.
func (u *Unsubscriber) page(w http.ResponseWriter, status int, d pageData) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'")
	w.WriteHeader(status)
	pageTemplate.Execute(w, d)
}

var pageTemplate = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<meta name="robots" content="noindex"><title>Unsubscribe</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:32em;margin:4em auto;padding:0 1em}button{font:inherit;padding:.5em 1.5em}</style>
</head><body>
{{if .Confirm}}<h1>Unsubscribe</h1>
<p>Stop sending mail to <strong>{{.Address}}</strong>?</p>
<form method="post"><input type="hidden" name="List-Unsubscribe" value="One-Click"><button type="submit">Unsubscribe</button></form>
{{else if .Done}}<h1>Unsubscribed</h1>
<p><strong>{{.Address}}</strong> will get no more of these messages.</p>
{{else}}<h1>Unsubscribe</h1>
<p>{{.Message}}</p>
{{end}}</body></html>
`))
