package console

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/postroom/postroom"
)

// Defaults and bounds of Options.PageSize.
const (
	DefaultPageSize = 50
	MaxPageSize     = 500
)

// Options configures a Handler. New copies it. Each section's field is
// optional: nil leaves the section out of the console (its pages answer
// 404 and its link is not shown).
type Options struct {
	// Account returns the account whose mail a request shows and acts
	// on: the application's own (admin) authentication has already let
	// the request through, and Account says which account its person
	// looks after (from a session, a header the application sets, or the
	// user name of HTTP basic authentication). An error answers 403 and
	// is logged. Required.
	Account func(*http.Request) (string, error)

	// Activity finds messages and their timelines (events.Memory and
	// events.SQL are one); nil leaves out the messages pages.
	Activity Activity

	// Suppressions lists and removes the account's suppressed addresses
	// (suppression.Memory and suppression.SQL are one); nil leaves out
	// the suppression pages.
	Suppressions Suppressions

	// Calls shows and steers the calls sent later (package outbox's
	// Outbox.AccountCalls() is one); nil leaves out the queued calls pages.
	Calls Calls

	// Templates lists, shows and publishes the account's stored templates
	// (templatestore.Memory and templatestore.SQL are one); nil leaves out
	// the templates pages.
	Templates Templates

	// Renderer renders a template with sample params on the template
	// page: a *postroom.Mailer made with postroom.NoAuth over the same
	// Options.Templates (the console has no account key to give). Nil:
	// no render form.
	Renderer Renderer

	// Preview is the preview page (package preview's Handler), served at
	// preview/ under the console, with its own headers. Nil: no preview.
	Preview http.Handler

	// PageSize is how many rows a list page shows (messages, suppressed
	// addresses, calls); the next page is a link with the store's
	// cursor. Zero means DefaultPageSize; more than MaxPageSize is
	// refused.
	PageSize int

	// Logger receives the errors the pages do not show (a store that
	// failed, an Account error). Nil means no logging.
	Logger *slog.Logger
}

// Handler serves the console. Make one with New; it is immutable and
// safe for concurrent use.
type Handler struct {
	opts Options
	mux  *http.ServeMux
	csrf *http.CrossOriginProtection
}

//go:embed page.html style.css
var assets embed.FS

var page = template.Must(template.New("page.html").Funcs(template.FuncMap{
	"when":  when,
	"query": query,
	"last":  last,
}).ParseFS(assets, "page.html"))

// New returns a Handler over the stores of opts, or an error naming the
// field of opts it refuses.
func New(opts Options) (*Handler, error) {
	switch {
	case opts.Account == nil:
		return nil, errors.New("console: New: Options.Account is nil: the console needs to know whose mail it shows")
	case opts.PageSize < 0 || opts.PageSize > MaxPageSize:
		return nil, fmt.Errorf("console: New: Options.PageSize %d: want 1 to %d, or 0 for %d", opts.PageSize, MaxPageSize, DefaultPageSize)
	}
	if opts.PageSize == 0 {
		opts.PageSize = DefaultPageSize
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	h := &Handler{opts: opts, mux: http.NewServeMux(), csrf: http.NewCrossOriginProtection()}
	css, _ := assets.ReadFile("style.css")
	h.mux.HandleFunc("GET /style.css", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/css; charset=utf-8")
		w.Header().Set("Cache-Control", "no-cache")
		w.Write(css)
	})
	h.mux.HandleFunc("GET /{$}", h.home)
	if opts.Activity != nil {
		h.mux.HandleFunc("GET /messages", h.messages)
		h.mux.HandleFunc("GET /message", h.message)
	}
	if opts.Suppressions != nil {
		h.mux.HandleFunc("GET /suppressions", h.suppressions)
		h.mux.HandleFunc("GET /suppression/remove", h.confirmRemove)
		h.mux.HandleFunc("POST /suppression/remove", h.remove)
	}
	if opts.Calls != nil {
		h.mux.HandleFunc("GET /calls", h.calls)
		h.mux.HandleFunc("GET /call", h.call)
		h.mux.HandleFunc("GET /call/cancel", h.confirmCancel)
		h.mux.HandleFunc("POST /call/cancel", h.cancel)
		h.mux.HandleFunc("POST /call/retry", h.retry)
	}
	if opts.Templates != nil {
		h.mux.HandleFunc("GET /templates", h.templates)
		h.mux.HandleFunc("GET /template", h.template)
		h.mux.HandleFunc("POST /template/render", h.render)
		h.mux.HandleFunc("POST /template/publish", h.publish)
	}
	if opts.Preview != nil {
		h.mux.Handle("/preview/", http.StripPrefix("/preview", opts.Preview))
	}
	return h, nil
}

// contentPolicy allows the console its own stylesheet and nothing else:
// no script, no other origin, no frame of it elsewhere, forms posted to
// itself only.
const contentPolicy = "default-src 'none'; style-src 'self'; img-src 'self' data:; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// ServeHTTP serves the console's pages. Every request that is not a GET,
// HEAD or OPTIONS is refused with 403 unless the browser says it comes
// from the console's own origin (http.CrossOriginProtection: the
// Sec-Fetch-Site header, or Origin against Host).
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", contentPolicy)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("Referrer-Policy", "same-origin")
	hd.Set("Cache-Control", "no-store") // the pages hold recipients' data
	if err := h.csrf.Check(r); err != nil {
		http.Error(w, "refused: a cross-origin request cannot change anything here", http.StatusForbidden)
		return
	}
	h.mux.ServeHTTP(w, r)
}

// view is what page.html shows: the navigation, a notice, and one of the
// sections' data.
type view struct {
	// Root is the relative path from the page to the console's root
	// ("" or "../"), before every link, so that the console works under
	// any prefix.
	Root    string
	Title   string
	Account string
	Nav     nav
	Notice  string
	Problem string

	Home       bool
	Messages   *messagesView
	Message    *messageView
	Suppressed *suppressionsView
	Remove     *removeView
	Calls      *callsView
	Call       *callView
	Cancel     *cancelView
	Templates  *templatesView
	Template   *templateView
}

// nav says which sections the console has.
type nav struct {
	Messages, Suppressions, Calls, Templates, Preview bool
}

func (h *Handler) nav() nav {
	o := &h.opts
	return nav{o.Activity != nil, o.Suppressions != nil, o.Calls != nil, o.Templates != nil, o.Preview != nil}
}

// account returns the request's account, or answers 403 and returns false.
func (h *Handler) account(w http.ResponseWriter, r *http.Request) (string, bool) {
	a, err := h.opts.Account(r)
	if err == nil && a == "" {
		err = errors.New("empty account")
	}
	if err != nil {
		h.opts.Logger.Warn("console: no account for the request", slog.Any("error", err))
		http.Error(w, "no account: the console does not know whose mail to show", http.StatusForbidden)
		return "", false
	}
	return a, true
}

// show writes the page for v with status (200 when zero).
func (h *Handler) show(w http.ResponseWriter, r *http.Request, status int, v *view) {
	v.Nav = h.nav()
	v.Root = strings.Repeat("../", max(strings.Count(r.URL.Path, "/")-1, 0))
	var b bytes.Buffer
	if err := page.Execute(&b, v); err != nil {
		h.opts.Logger.Error("console: page", slog.Any("error", err))
		http.Error(w, "the page could not be made", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(b.Len()))
	if status != 0 {
		w.WriteHeader(status)
	}
	w.Write(b.Bytes())
}

// fail shows a page saying what went wrong: problem for the person, err
// (the store's, which may hold internal detail) for the log.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, status int, account, title, problem string, err error) {
	if err != nil {
		h.opts.Logger.Error("console: "+title, slog.String("account_id", account), slog.Any("error", err))
	}
	h.show(w, r, status, &view{Title: title, Account: account, Problem: problem})
}

// home shows the console's sections.
func (h *Handler) home(w http.ResponseWriter, r *http.Request) {
	account, ok := h.account(w, r)
	if !ok {
		return
	}
	h.show(w, r, 0, &view{Title: "Console", Account: account, Home: true})
}

// seeOther redirects a POST to the page that shows its outcome
// (post/redirect/get), path relative to the console's root plus a query.
func seeOther(w http.ResponseWriter, r *http.Request, path string, q url.Values) {
	// r.URL.Path is "/section/action" under the console's root: go up
	// to the root relatively, so that the prefix it is mounted under
	// does not matter.
	target := "../" + path
	if len(q) > 0 {
		target += "?" + q.Encode()
	}
	// Not http.Redirect: it would make target absolute from r.URL.Path,
	// which lacks the prefix.
	w.Header().Set("Location", target)
	w.WriteHeader(http.StatusSeeOther)
}

// when formats a time for the pages, in UTC.
func when(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

// last returns the latest event of a timeline, nil when it has none.
func last(timeline []postroom.Event) *postroom.Event {
	if len(timeline) == 0 {
		return nil
	}
	return &timeline[len(timeline)-1]
}

// query builds a query string from pairs of names and values, leaving out
// the empty values. It is a template.URL, every value percent-encoded by
// url.Values, so that html/template keeps its = and & (it would escape
// them in a plain string) and still escapes it for the attribute.
func query(kv ...string) template.URL {
	q := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			q.Set(kv[i], kv[i+1])
		}
	}
	return template.URL(q.Encode())
}
