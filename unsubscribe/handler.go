package unsubscribe

import (
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"html/template"
	"net/http"
	"net/url"
	"strings"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/suppression"
)

// maxFormBytes bounds a POST body: the one-click form is 26 bytes.
const maxFormBytes = 4 << 10

// The fields of a POST's form.
const (
	// oneClickField=oneClickValue is RFC 8058's one-click form (§3.1),
	// what mailbox providers POST and what the page's first choice sends.
	oneClickField = "List-Unsubscribe"
	oneClickValue = "One-Click"
	// scopeField=lists is the page's "all lists" choice.
	scopeField = "scope"
)

// ServeHTTP honours the URL's token, the last segment of the request's
// path:
//
//   - GET or HEAD: shows a page naming the address and the token's list,
//     with the choices, each a form that POSTs to the same URL: for a
//     list message's token "this list" (the one-click form) and "all
//     lists of this sender" (scope=lists); for a transactional message's
//     token, "all mail"; for a token of version 1, "all lists". It
//     records nothing (link scanners fetch every URL).
//   - POST with the form field List-Unsubscribe=One-Click (RFC 8058 §3.2,
//     what mailbox providers send) and no scope field: records the
//     token's Subscription.Scope, that is the token's list alone for a
//     list message's token (200, a page saying so).
//   - POST with scope=lists (the page's second choice): records every
//     list of the account (postroom.ScopeLists); transactional mail still
//     goes to the address.
//   - A token that is invalid: 400; expired: 410, with a page saying so.
//   - POST with neither field, or with a scope other than lists: 400.
//     Other methods: 405.
//   - Options.Suppressions refusing the address (a *postroom.ValidationError):
//     400; failing otherwise: 503 (the provider retries).
//
// An unsubscribe is recorded with Options.Suppressions.Observe (a
// suppression.Unsubscribe observation with its Scope, and its List for a
// single list) and announced as an unsub event whose List is the list
// unsubscribed from, empty for all lists and all mail. Recording it
// again is harmless.
//
// Every page is plain HTML without script, image or any other fetch, its
// Content-Security-Policy allowing only its own inline style and forms
// posting to its own origin; the address and the list are escaped
// (html/template).
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
	s, err := verify(u.opts.Keys, token, u.opts.Now())
	switch {
	case errors.Is(err, ErrExpiredToken):
		u.page(w, http.StatusGone, pageData{Message: "This unsubscribe link has expired. Please use the link in a more recent message."})
		return
	case err != nil:
		u.page(w, http.StatusBadRequest, pageData{Message: "This unsubscribe link is not valid."})
		return
	}
	if r.Method != http.MethodPost {
		u.page(w, http.StatusOK, pageData{Address: s.Address, List: s.List, Scope: s.Scope, Confirm: true})
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseMultipartForm(maxFormBytes); err != nil && !errors.Is(err, http.ErrNotMultipart) {
		u.page(w, http.StatusBadRequest, pageData{Message: "The request could not be read."})
		return
	}
	scope, list, ok := choice(s, r.PostForm)
	if !ok {
		u.page(w, http.StatusBadRequest, pageData{Message: "A one-click unsubscribe POSTs List-Unsubscribe=One-Click (RFC 8058)."})
		return
	}
	now := u.opts.Now()
	_, err = u.opts.Suppressions.Observe(r.Context(), suppression.Observation{
		AccountID: s.AccountID, Address: s.Address, Kind: suppression.Unsubscribe, At: now,
		List: list, Scope: scope,
	})
	if err != nil {
		u.opts.Logger.Error("unsubscribe: recording an unsubscribe failed", "account_id", s.AccountID, "list", list, "scope", scope, "err", err)
		if ve := (*postroom.ValidationError)(nil); errors.As(err, &ve) {
			// Retrying cannot help: the list refuses the address.
			u.page(w, http.StatusBadRequest, pageData{Message: "This address cannot be unsubscribed here. Please write to the sender."})
			return
		}
		u.page(w, http.StatusServiceUnavailable, pageData{Message: "The unsubscribe could not be recorded now. Please try again later."})
		return
	}
	if u.opts.OnEvent != nil {
		u.opts.OnEvent(r.Context(), postroom.Event{Type: postroom.EventUnsub, AccountID: s.AccountID, Email: s.Address, List: list, At: now})
	}
	u.page(w, http.StatusOK, pageData{Address: s.Address, List: list, Scope: scope, Done: true})
}

// choice returns what a POST's form asks to unsubscribe from, and the
// list of a ScopeList: with scope=lists every list, with the one-click
// field alone what the token's one-click POST means; ok is false for any
// other form.
func choice(s Subscription, form url.Values) (scope postroom.Scope, list string, ok bool) {
	if form.Has(scopeField) {
		if form.Get(scopeField) != string(postroom.ScopeLists) {
			return "", "", false
		}
		return postroom.ScopeLists, "", true
	}
	if form.Get(oneClickField) != oneClickValue {
		return "", "", false
	}
	if s.Scope == postroom.ScopeList {
		return s.Scope, s.List, true
	}
	return s.Scope, "", true
}

// pageData fills the page.
type pageData struct {
	Address string
	List    string         // the list of a ScopeList
	Scope   postroom.Scope // the token's (Confirm) or what was unsubscribed (Done)
	Confirm bool           // the choices
	Done    bool           // unsubscribed
	Message string
}

// PerList and AllLists tell the page's scopes apart (the third is all
// mail), for the template.
func (d pageData) PerList() bool  { return d.Scope == postroom.ScopeList }
func (d pageData) AllLists() bool { return d.Scope == postroom.ScopeLists }

// pageStyle is the page's only style; pageCSP allows it by its hash.
const pageStyle = `body{font:16px/1.5 system-ui,sans-serif;max-width:34em;margin:4em auto;padding:0 1em;color:#222}` +
	`form{margin:1em 0}button{font:inherit;padding:.5em 1.5em;cursor:pointer}` +
	`.id{font-family:ui-monospace,monospace;overflow-wrap:anywhere}.note{color:#555}`

// pageCSP fetches nothing (no script, image, font or frame), applies the
// page's own style, lets its forms post to its own origin only, and keeps
// other sites from framing it (a click on a hidden button).
var pageCSP = "default-src 'none'; style-src 'sha256-" + styleHash() + "'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

func styleHash() string {
	h := sha256.Sum256([]byte(pageStyle))
	return base64.StdEncoding.EncodeToString(h[:])
}

// page writes the page with status.
func (u *Unsubscriber) page(w http.ResponseWriter, status int, d pageData) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", pageCSP)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	if err := pageTemplate.Execute(w, d); err != nil {
		u.opts.Logger.Debug("unsubscribe: writing the page failed", "err", err)
	}
}

var pageTemplate = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<meta name="robots" content="noindex"><title>Unsubscribe</title>
<style>` + pageStyle + `</style>
</head><body>
{{if .Confirm}}<h1>Unsubscribe</h1>
{{if .PerList}}<p>Stop the messages of the list <strong class="id" id="list">{{.List}}</strong> to <strong class="id" id="address">{{.Address}}</strong>?</p>
<form method="post" id="this-list"><input type="hidden" name="List-Unsubscribe" value="One-Click"><button type="submit">Unsubscribe from this list</button></form>
<p>Or stop the messages of every list of this sender. Messages you need about your account and orders, such as receipts, still come.</p>
<form method="post" id="all-lists"><input type="hidden" name="scope" value="lists"><button type="submit">Unsubscribe from all lists</button></form>
{{else if .AllLists}}<p>Stop the messages of every list of this sender to <strong class="id" id="address">{{.Address}}</strong>? Messages you need about your account and orders, such as receipts, still come.</p>
<form method="post" id="all-lists"><input type="hidden" name="scope" value="lists"><button type="submit">Unsubscribe from all lists</button></form>
{{else}}<p>Stop all mail of this sender to <strong class="id" id="address">{{.Address}}</strong>, messages about your account and orders, such as receipts, included?</p>
<form method="post" id="all-mail"><input type="hidden" name="List-Unsubscribe" value="One-Click"><button type="submit">Unsubscribe from all mail</button></form>
{{end}}{{else if .Done}}<h1 id="done">Unsubscribed</h1>
{{if .PerList}}<p><strong class="id" id="address">{{.Address}}</strong> will get no more messages of the list <strong class="id" id="list">{{.List}}</strong>.</p>
{{else if .AllLists}}<p><strong class="id" id="address">{{.Address}}</strong> will get no more messages of this sender's lists.</p>
<p class="note">Messages about your account and orders, such as receipts, still come.</p>
{{else}}<p><strong class="id" id="address">{{.Address}}</strong> will get no more mail from this sender.</p>
{{end}}{{else}}<h1>Unsubscribe</h1>
<p>{{.Message}}</p>
{{end}}</body></html>
`))
