package console_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/console"
)

// TestNew refuses Options without an account function or with a page
// size out of range.
func TestNew(t *testing.T) {
	acct := func(*http.Request) (string, error) { return "a", nil }
	for _, o := range []console.Options{
		{},
		{Account: acct, PageSize: -1},
		{Account: acct, PageSize: console.MaxPageSize + 1},
	} {
		if _, err := console.New(o); err == nil {
			t.Errorf("New(%+v) took it", o)
		}
	}
	if _, err := console.New(console.Options{Account: acct}); err != nil {
		t.Errorf("New with an account function alone: %v", err)
	}
}

// TestHeaders checks the security headers of every page, the stylesheet
// included, and that no page loads a script or anything remote.
func TestHeaders(t *testing.T) {
	f := newFixture(t, nil)
	for _, path := range []string{"/", "/messages", "/message?id=" + sentID, "/suppressions",
		"/suppression/remove?email=bob@example.net&scope=list&list=news.shop.example.com",
		"/templates", "/template?id=password-reset", "/style.css", "/nope"} {
		res, body := f.get(t, path)
		want := http.StatusOK
		if path == "/nope" {
			want = http.StatusNotFound
		}
		if res.StatusCode != want {
			t.Errorf("GET %s: %d, want %d", path, res.StatusCode, want)
		}
		csp := res.Header.Get("Content-Security-Policy")
		for _, d := range []string{"default-src 'none'", "style-src 'self'", "form-action 'self'", "frame-ancestors 'none'", "base-uri 'none'"} {
			if !strings.Contains(csp, d) {
				t.Errorf("GET %s: Content-Security-Policy %q lacks %q", path, csp, d)
			}
		}
		if strings.Contains(csp, "script-src") || strings.Contains(csp, "unsafe") {
			t.Errorf("GET %s: Content-Security-Policy %q allows scripts or unsafe", path, csp)
		}
		if v := res.Header.Get("X-Content-Type-Options"); v != "nosniff" {
			t.Errorf("GET %s: X-Content-Type-Options %q", path, v)
		}
		if v := res.Header.Get("Referrer-Policy"); v != "same-origin" {
			t.Errorf("GET %s: Referrer-Policy %q", path, v)
		}
		if strings.Contains(body, "<script") || strings.Contains(body, "http://") || strings.Contains(body, "https://") {
			t.Errorf("GET %s: the page has a script or a remote URL:\n%s", path, body)
		}
	}
	if res, _ := f.get(t, "/style.css"); !strings.HasPrefix(res.Header.Get("Content-Type"), "text/css") {
		t.Errorf("the stylesheet is served as %q", res.Header.Get("Content-Type"))
	}
}

// TestSearchMessages answers the support question: Ann's three
// messages, newest first, each with its state; the bounced one opens on
// its timeline. Another account's message to her is never shown.
func TestSearchMessages(t *testing.T) {
	f := newFixture(t, nil)
	res, body := f.get(t, "/messages?q=ANN@example.org")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("search: %d\n%s", res.StatusCode, body)
	}
	b, d, s := strings.Index(body, bouncedID), strings.Index(body, deferredID), strings.Index(body, sentID)
	if b < 0 || d < 0 || s < 0 || !(b < d && d < s) {
		t.Errorf("Ann's messages at %d, %d, %d, want all three newest first:\n%s", b, d, s, body)
	}
	if strings.Contains(body, otherID) || strings.Contains(body, "pwned") {
		t.Errorf("the search shows another account's message or another address's:\n%s", body)
	}
	for _, want := range []string{"badge-bounced", "badge-sent"} {
		if !strings.Contains(body, want) {
			t.Errorf("the search lacks %s", want)
		}
	}

	_, body = f.get(t, "/message?id="+bouncedID)
	for _, want := range []string{"event-send", "event-hard_bounce", "5.1.1", "mailbox disabled", `id="state">bounced`} {
		if !strings.Contains(body, want) {
			t.Errorf("the bounced message's page lacks %q", want)
		}
	}
	_, body = f.get(t, "/message?id="+deferredID)
	if i, j := strings.Index(body, "event-deferral"), strings.Index(body, "event-send"); i < 0 || j < i || !strings.Contains(body, "greylisted") {
		t.Errorf("the deferred message's timeline is not deferral then send:\n%s", body)
	}
	if res, _ := f.get(t, "/message?id="+otherID); res.StatusCode != http.StatusNotFound {
		t.Errorf("another account's message: %d, want 404", res.StatusCode)
	}
	// By send id, and by state.
	if _, body := f.get(t, "/messages?q="+strings.ToUpper(deferredID)); !strings.Contains(body, deferredID) || strings.Contains(body, sentID) {
		t.Errorf("search by send id:\n%s", body)
	}
	if _, body := f.get(t, "/messages?state=bounced"); !strings.Contains(body, bouncedID) || strings.Contains(body, sentID) {
		t.Errorf("search by state:\n%s", body)
	}
	if res, _ := f.get(t, "/messages?state=nonsense"); res.StatusCode != http.StatusBadRequest {
		t.Errorf("an unknown state: %d, want 400", res.StatusCode)
	}
}

// TestMessagesPages walks the search a page at a time with the store's
// cursor.
func TestMessagesPages(t *testing.T) {
	f := newFixture(t, func(o *console.Options) { o.PageSize = 1 })
	path := "/messages?q=" + url.QueryEscape(ann)
	var seen []string
	for range 5 {
		_, body := f.get(t, path)
		for _, id := range []string{sentID, deferredID, bouncedID} {
			if strings.Contains(body, ">"+id+"<") {
				seen = append(seen, id)
			}
		}
		if path = nextLink(body); path == "" {
			break
		}
	}
	if strings.Join(seen, " ") != strings.Join([]string{bouncedID, deferredID, sentID}, " ") {
		t.Errorf("pages showed %q, want the three, one a page, newest first", seen)
	}
}

// nextLink returns the path of the page's "next" link under the
// console, or "" when it has none.
func nextLink(body string) string {
	i := strings.Index(body, `id="next" href="`)
	if i < 0 {
		return ""
	}
	href := body[i+len(`id="next" href="`):]
	return "/" + strings.ReplaceAll(href[:strings.IndexByte(href, '"')], "&amp;", "&")
}

// TestSuppressionsPages walks the list a page at a time with the store's
// cursor, keeping the filter.
func TestSuppressionsPages(t *testing.T) {
	f := newFixture(t, func(o *console.Options) { o.PageSize = 1 })
	var seen []string
	for path := "/suppressions?expired=1"; path != ""; {
		_, body := f.get(t, path)
		for _, a := range []string{ann, "bob@example.net", "carol@example.net", "dave@example.net"} {
			if strings.Contains(body, ">"+a+"<") {
				seen = append(seen, a)
			}
		}
		if len(seen) > 4 {
			t.Fatalf("more pages than entries: %q", seen)
		}
		path = nextLink(body)
		if path != "" && !strings.Contains(path, "expired=1") {
			t.Errorf("the next page's link %q drops the filter", path)
		}
	}
	if strings.Join(seen, " ") != ann+" bob@example.net carol@example.net" {
		t.Errorf("pages showed %q, want the account's three, one a page, by address", seen)
	}
}

// TestHostileValuesEscaped: an address, a diagnostic, a suppression's
// detail, a template's source and a rendered subject written as markup
// show as text.
func TestHostileValuesEscaped(t *testing.T) {
	f := newFixture(t, nil)
	check := func(what, body string, raws ...string) {
		t.Helper()
		for _, raw := range raws {
			if strings.Contains(body, raw) {
				t.Errorf("%s: %q is in the page as markup", what, raw)
			}
		}
		if !strings.Contains(body, "&lt;img") && !strings.Contains(body, "&lt;script") {
			t.Errorf("%s: the hostile value is not shown escaped:\n%s", what, body)
		}
	}
	_, body := f.get(t, "/messages?q="+url.QueryEscape(hostileEmail))
	check("search", body, "<img/src=x", "<script>")
	_, body = f.get(t, "/messages")
	check("messages", body, "<img src=x", "<img/src=x", "<script>")
	_, body = f.get(t, "/message?id="+hostileID)
	check("message", body, "<img src=x", "<img/src=x")
	_, body = f.get(t, "/suppressions")
	check("suppressions", body, "<img src=x")
	_, body = f.get(t, "/template?id=hostile")
	check("template", body, "<img src=x")
	_, body = f.post(t, "/template/render", url.Values{"id": {"hostile"}, "which": {"live"}, "part": {"html"},
		"subject": {hostileHTML + " {{x}}"}, "params": {`{"x": "<b>bold</b>"}`}})
	check("render", body, "<img src=x", "<b>bold</b>")
	if !strings.Contains(body, `id="rendered-subject"`) {
		t.Errorf("the render shows no subject:\n%s", body)
	}
}

// TestSuppressionsFilter filters by scope and reason, and never shows
// another account's entries.
func TestSuppressionsFilter(t *testing.T) {
	f := newFixture(t, nil)
	_, body := f.get(t, "/suppressions")
	for _, a := range []string{ann, "bob@example.net", "carol@example.net"} {
		if !strings.Contains(body, a) {
			t.Errorf("the list lacks %s", a)
		}
	}
	if strings.Contains(body, "dave@") {
		t.Errorf("the list shows another account's entry")
	}
	if _, body := f.get(t, "/suppressions?scope=list"); !strings.Contains(body, "bob@example.net") || strings.Contains(body, ann) {
		t.Errorf("scope list:\n%s", body)
	}
	if _, body := f.get(t, "/suppressions?reason=hard-bounce"); !strings.Contains(body, ann) || strings.Contains(body, "bob@") {
		t.Errorf("reason hard-bounce:\n%s", body)
	}
	if _, body := f.get(t, "/suppressions?prefix=car"); !strings.Contains(body, "carol@") || strings.Contains(body, "bob@") {
		t.Errorf("prefix car:\n%s", body)
	}
	if res, _ := f.get(t, "/suppressions?scope=bogus"); res.StatusCode != http.StatusBadRequest {
		t.Errorf("a bogus scope: %d, want 400", res.StatusCode)
	}
}

// TestRemoveSuppression: the GET asks and changes nothing; the POST
// removes the entry of that scope alone and redirects to the list.
func TestRemoveSuppression(t *testing.T) {
	f := newFixture(t, nil)
	res, body := f.get(t, "/suppression/remove?email="+url.QueryEscape(ann)+"&scope=all")
	if res.StatusCode != http.StatusOK || !strings.Contains(body, `method="post"`) || !strings.Contains(body, "although it bounced") {
		t.Fatalf("confirmation: %d\n%s", res.StatusCode, body)
	}
	if !f.listed(t, ann, postroom.ScopeAll) {
		t.Fatal("the confirmation page removed the entry")
	}
	if res, _ := f.get(t, "/suppression/remove?email=nobody@example.net&scope=all"); res.StatusCode != http.StatusNotFound {
		t.Errorf("confirmation of an address not listed: %d, want 404", res.StatusCode)
	}
	if res, _ := f.get(t, "/suppression/remove?email=dave@example.net&scope=all"); res.StatusCode != http.StatusNotFound {
		t.Errorf("confirmation of another account's entry: %d, want 404", res.StatusCode)
	}
	res, _ = f.post(t, "/suppression/remove", url.Values{"email": {ann}, "scope": {"all"}})
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "../suppressions?removed="+url.QueryEscape(ann) {
		t.Fatalf("removal: %d, Location %q", res.StatusCode, res.Header.Get("Location"))
	}
	if f.listed(t, ann, postroom.ScopeAll) {
		t.Error("the entry is still listed")
	}
	if !f.listed(t, "bob@example.net", postroom.ScopeList) {
		t.Error("another entry went too")
	}
	if res, _ := f.post(t, "/suppression/remove", url.Values{"email": {ann}, "scope": {"all"}}); res.StatusCode != http.StatusNotFound {
		t.Errorf("removing it again: %d, want 404", res.StatusCode)
	}
	// Following the redirect under the prefix lands on the list.
	if _, body := f.get(t, "/suppressions?removed="+url.QueryEscape(ann)); !strings.Contains(body, `id="notice"`) {
		t.Errorf("the list after a removal has no notice")
	}
}

// TestCrossSitePostRefused: a POST from another site (Sec-Fetch-Site, or
// an Origin that is not the console's host) is refused with 403 and
// removes nothing; a GET of an action's path changes nothing either.
func TestCrossSitePostRefused(t *testing.T) {
	f := newFixture(t, nil)
	form := url.Values{"email": {ann}, "scope": {"all"}}.Encode()
	for name, set := range map[string]func(*http.Request){
		"cross-site":     func(r *http.Request) { r.Header.Set("Sec-Fetch-Site", "cross-site") },
		"same-site":      func(r *http.Request) { r.Header.Set("Sec-Fetch-Site", "same-site") },
		"another origin": func(r *http.Request) { r.Header.Set("Origin", "https://attacker.example") },
	} {
		req := httptest.NewRequest(http.MethodPost, "/suppression/remove", strings.NewReader(form))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		set(req)
		if res, _ := serve(t, f.h, req); res.StatusCode != http.StatusForbidden {
			t.Errorf("%s: %d, want 403", name, res.StatusCode)
		}
		if !f.listed(t, ann, postroom.ScopeAll) {
			t.Fatalf("%s: the entry was removed", name)
		}
	}
	for _, p := range []string{"/template/publish?id=password-reset", "/template/render?id=password-reset"} {
		if res, _ := f.get(t, p); res.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("GET %s: %d, want 405", p, res.StatusCode)
		}
	}
	tpl, err := f.templates.Info(t.Context(), account, "password-reset")
	if err != nil || tpl.Published.Version != 1 {
		t.Errorf("after the GETs, the template is %+v, %v; want version 1 live", tpl, err)
	}
	req := httptest.NewRequest(http.MethodPost, "/template/publish", strings.NewReader("id=password-reset"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	if res, _ := serve(t, f.h, req); res.StatusCode != http.StatusForbidden {
		t.Errorf("a cross-site publish: %d, want 403", res.StatusCode)
	}
	if tpl, _ := f.templates.Info(t.Context(), account, "password-reset"); tpl.Published.Version != 1 {
		t.Errorf("a cross-site publish published version %d", tpl.Published.Version)
	}
}

// TestTemplates lists the account's templates, shows one with its draft
// and live version, renders it with sample params (missing ones named),
// and publishes its draft.
func TestTemplates(t *testing.T) {
	f := newFixture(t, nil)
	_, body := f.get(t, "/templates")
	if !strings.Contains(body, "password-reset") || !strings.Contains(body, "draft differs") || strings.Contains(body, "secret") {
		t.Errorf("templates:\n%s", body)
	}
	_, body = f.get(t, "/template?id=password-reset")
	if !strings.Contains(body, "Choose a new password") || !strings.Contains(body, "Reset your password") || !strings.Contains(body, `id="publish"`) {
		t.Errorf("the template page lacks its draft, its live source or the publish button:\n%s", body)
	}
	if res, _ := f.get(t, "/template?id=secret"); res.StatusCode != http.StatusNotFound {
		t.Errorf("another account's template: %d, want 404", res.StatusCode)
	}
	_, body = f.post(t, "/template/render", url.Values{"id": {"password-reset"}, "which": {"draft"}, "part": {"html"},
		"subject": {"Reset your password, {{first_name}}"}, "params": {`{"first_name": "Ann"}`}})
	if !strings.Contains(body, "Reset your password, Ann") || !strings.Contains(body, "Hi Ann,") || !strings.Contains(body, `<mark class="missing">reset_url</mark>`) {
		t.Errorf("render of the draft:\n%s", body)
	}
	_, body = f.post(t, "/template/render", url.Values{"id": {"password-reset"}, "which": {"live"}, "part": {"html"}, "params": {`{"first_name": "Ann"}`}})
	if !strings.Contains(body, "Hello Ann,") {
		t.Errorf("render of the live version:\n%s", body)
	}
	_, body = f.post(t, "/template/render", url.Values{"id": {"password-reset"}, "params": {`[1`}})
	if !strings.Contains(body, `id="refused"`) {
		t.Errorf("params that are not JSON are not refused:\n%s", body)
	}
	res, _ := f.post(t, "/template/publish", url.Values{"id": {"password-reset"}})
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "../template?id=password-reset&published=2" {
		t.Fatalf("publish: %d, %q", res.StatusCode, res.Header.Get("Location"))
	}
	tpl, err := f.templates.Info(t.Context(), account, "password-reset")
	if err != nil || tpl.Published.Version != 2 || tpl.Published.Source != tpl.Draft {
		t.Errorf("after publish: %+v, %v", tpl, err)
	}
	if res, _ := f.post(t, "/template/publish", url.Values{"id": {"secret"}}); res.StatusCode != http.StatusNotFound {
		t.Errorf("publishing another account's template: %d, want 404", res.StatusCode)
	}
}

// TestAccountRefused: without an account, every page is 403.
func TestAccountRefused(t *testing.T) {
	f := newFixture(t, func(o *console.Options) {
		o.Account = func(*http.Request) (string, error) { return "", errors.New("no session") }
	})
	for _, p := range []string{"/", "/messages", "/suppressions", "/templates"} {
		if res, _ := f.get(t, p); res.StatusCode != http.StatusForbidden {
			t.Errorf("GET %s: %d, want 403", p, res.StatusCode)
		}
	}
}

// TestSectionsOptional: a console without a store has no page and no
// link for it.
func TestSectionsOptional(t *testing.T) {
	f := newFixture(t, func(o *console.Options) {
		o.Suppressions, o.Templates, o.Renderer, o.Preview = nil, nil, nil, nil
	})
	_, body := f.get(t, "/")
	if !strings.Contains(body, `href="messages"`) || strings.Contains(body, "suppressions") || strings.Contains(body, "templates") || strings.Contains(body, "preview/") || strings.Contains(body, "calls") {
		t.Errorf("home:\n%s", body)
	}
	for _, p := range []string{"/suppressions", "/templates", "/calls", "/preview/"} {
		if res, _ := f.get(t, p); res.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", p, res.StatusCode)
		}
	}
}

// TestPreviewMounted serves the preview page under the console, with its
// own policy (it shows messages' inline styles).
func TestPreviewMounted(t *testing.T) {
	f := newFixture(t, nil)
	res, body := f.get(t, "/preview/")
	if res.StatusCode != http.StatusOK || !strings.Contains(body, "<textarea") {
		t.Fatalf("preview: %d\n%s", res.StatusCode, body)
	}
	if res, _ := f.get(t, "/preview/style.css"); res.StatusCode != http.StatusOK {
		t.Errorf("the preview's stylesheet: %d", res.StatusCode)
	}
}

// TestUnderPrefix follows the console's relative links under the prefix
// it is mounted at, through a real server.
func TestUnderPrefix(t *testing.T) {
	f := newFixture(t, nil)
	res, err := http.Get(f.srv.URL + prefix + "/message?id=" + bouncedID)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET under the prefix: %d", res.StatusCode)
	}
	base, _ := url.Parse(f.srv.URL + prefix + "/suppression/remove")
	for _, rel := range []string{"../style.css", "../suppressions"} {
		u := base.ResolveReference(&url.URL{Path: rel})
		res, err := http.Get(u.String())
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Errorf("%s from a page two deep: %d", u, res.StatusCode)
		}
	}
}

// TestSearchQueued: the form offers the queued state, and choosing it
// lists a recipient of a queued call not tried yet (a message with no
// send id) and none of the messages that were tried.
func TestSearchQueued(t *testing.T) {
	f := newFixture(t, nil)
	const zoe = "zoe@example.org"
	f.activity.OnEvent(t.Context(), postroom.Event{Type: postroom.EventQueued, AccountID: account, Email: zoe, CallID: "call-later", At: t0.Add(4 * time.Hour)})
	_, body := f.get(t, "/messages")
	if !strings.Contains(body, `<option value="queued"`) {
		t.Errorf("the form does not offer the queued state:\n%s", body)
	}
	res, body := f.get(t, "/messages?state=queued")
	if res.StatusCode != http.StatusOK || !strings.Contains(body, zoe) || !strings.Contains(body, "badge-queued") {
		t.Fatalf("search by state queued: %d, want %s listed\n%s", res.StatusCode, zoe, body)
	}
	if strings.Contains(body, sentID) || strings.Contains(body, bouncedID) || !strings.Contains(body, `<option value="queued" selected`) {
		t.Errorf("search by state queued lists a message that was tried, or forgets the state chosen:\n%s", body)
	}
}

// TestMessageFacts: a message's page shows what its events record of
// its call: subject, sender, templates and call id.
func TestMessageFacts(t *testing.T) {
	f := newFixture(t, nil)
	const id = "5f60718293a4b5c6d7e8f90a1b2c3d4e"
	f.activity.OnEvent(t.Context(), postroom.Event{Type: postroom.EventSend, SendID: id, AccountID: account, Email: ann,
		CallID: "call-reset", From: "no-reply@shop.example.com", Subject: "Reset <your> password", HTMLTemplateID: "password-reset", At: t0.Add(5 * time.Hour)})
	_, body := f.get(t, "/message?id="+id)
	for _, want := range []string{`id="subject">Reset &lt;your&gt; password<`, `id="sender">no-reply@shop.example.com<`, `<code>password-reset</code>`, `id="call-id">call-reset<`} {
		if !strings.Contains(body, want) {
			t.Errorf("the message's page lacks %s:\n%s", want, body)
		}
	}
	if _, body := f.get(t, "/message?id="+sentID); strings.Contains(body, `id="subject"`) || strings.Contains(body, `id="call-id"`) {
		t.Errorf("a message whose events record no call shows a subject or call:\n%s", body)
	}
}
