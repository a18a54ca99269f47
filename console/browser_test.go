package console_test

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/testkit/browsertest"
)

// screenshotEnv names a file to save the timeline's screenshot to as
// well, for the docs' picture: POSTROOM_CONSOLE_SCREENSHOT=docs/console.png.
const screenshotEnv = "POSTROOM_CONSOLE_SCREENSHOT"

// waitFor polls the page until the JavaScript predicate is true, past
// the navigations a click starts (an evaluation during one fails and is
// tried again); ctx's deadline bounds it.
func waitFor(t *testing.T, ctx context.Context, predicate string) {
	t.Helper()
	for {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.readyState === "complete" && (`+predicate+`)`))
		if err == nil && ok {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v", predicate, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// TestBrowserSupportQuestion answers "did Ann get her password reset?"
// in headless Chromium as a person would: search her address, see her
// three messages, open the bounced one and the deferred one and read
// their timelines. It saves a screenshot of the bounced message's
// timeline in the test's temp dir.
func TestBrowserSupportQuestion(t *testing.T) {
	if testing.Short() {
		t.Skip("drives a headless Chromium")
	}
	ctx := browsertest.New(t, 1100, 760)
	f := newFixture(t, nil)
	err := chromedp.Do(ctx,
		chromedp.Navigate(f.srv.URL+prefix+"/"),
		chromedp.Click(chromedp.CSS(`nav a[href="messages"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#q`)),
		chromedp.SetValue(chromedp.CSS(`#q`), ann),
		chromedp.Click(chromedp.CSS(`form.filter button`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, `location.search.includes("q=ann") && document.querySelector("#messages") !== null`)
	rows, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('#messages tbody tr')].map(tr => tr.innerText)`))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || !strings.Contains(rows[0], "bounced") || !strings.Contains(rows[1], "sent") || !strings.Contains(rows[2], "sent") {
		t.Fatalf("Ann's messages: %q, want bounced, sent, sent", rows)
	}

	// search goes back to the search's page (its address is Ann's).
	search := func() {
		t.Helper()
		err := chromedp.Do(ctx, chromedp.Navigate(f.srv.URL+prefix+"/messages?q="+url.QueryEscape(ann)), chromedp.WaitVisible(chromedp.CSS(`#messages`)))
		if err != nil {
			t.Fatal(err)
		}
	}
	// timeline opens a message from the search and returns its timeline.
	timeline := func(id string) []string {
		t.Helper()
		err := chromedp.Do(ctx,
			chromedp.Click(chromedp.CSS(`a.open[href$="`+id+`"]`)),
			chromedp.WaitVisible(chromedp.CSS(`#timeline`)),
		)
		if err != nil {
			t.Fatal(err)
		}
		items, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('#timeline li')].map(li => li.innerText)`))
		if err != nil {
			t.Fatal(err)
		}
		return items
	}
	bounced := timeline(bouncedID)
	if len(bounced) != 2 || !strings.Contains(bounced[0], "send") || !strings.Contains(bounced[1], "hard_bounce") || !strings.Contains(bounced[1], "mailbox disabled") {
		t.Errorf("the bounced message's timeline: %q", bounced)
	}
	png1, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	search()
	deferred := timeline(deferredID)
	if len(deferred) != 2 || !strings.Contains(deferred[0], "deferral") || !strings.Contains(deferred[0], "greylisted") || !strings.Contains(deferred[1], "send") {
		t.Errorf("the deferred message's timeline: %q", deferred)
	}
	search()
	direct := timeline(sentID)
	if len(direct) != 1 || !strings.Contains(direct[0], "send") {
		t.Errorf("the direct call's timeline: %q", direct)
	}

	img, err := png.Decode(bytes.NewReader(png1))
	if err != nil {
		t.Fatalf("the screenshot: %v", err)
	}
	if b := img.Bounds(); b.Dx() < 100 || b.Dy() < 100 {
		t.Errorf("the screenshot is %v", b)
	}
	path := filepath.Join(t.TempDir(), "console.png")
	if err := os.WriteFile(path, png1, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (%d bytes)", path, len(png1))
	if out := os.Getenv(screenshotEnv); out != "" {
		if err := os.WriteFile(out, png1, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// pageState is what the hostile values could change if they ran: the
// title, the images, the scripts, the elements with event handlers, and
// whether the stylesheet applied.
const pageState = `[document.title, document.images.length, document.scripts.length,
	document.querySelectorAll('[onerror],[onload],[onmouseover]').length, getComputedStyle(document.body).maxWidth]`

// TestBrowserHostileValues: a hostile address, diagnostic and template
// source, and a subject written as markup rendered with a template, show
// in Chromium as the text they are; none of it runs or makes an element.
func TestBrowserHostileValues(t *testing.T) {
	if testing.Short() {
		t.Skip("drives a headless Chromium")
	}
	ctx := browsertest.New(t, 1100, 760)
	f := newFixture(t, nil)
	check := func(what, title string) {
		t.Helper()
		state, err := chromedp.Run(ctx, chromedp.Evaluate[[]any](pageState))
		if err != nil {
			t.Fatal(err)
		}
		if state[0] != title || state[1] != 0.0 || state[2] != 0.0 || state[3] != 0.0 || state[4] == "none" {
			t.Errorf("%s: title, images, scripts, elements with handlers, body max-width: %v; want %q, 0, 0, 0, a width", what, state, title)
		}
	}
	err := chromedp.Do(ctx, chromedp.Navigate(f.srv.URL+prefix+"/message?id="+hostileID), chromedp.WaitVisible(chromedp.CSS(`#timeline`)))
	if err != nil {
		t.Fatal(err)
	}
	for sel, want := range map[string]string{`#email`: hostileEmail, `#timeline li:last-child .diagnostic`: hostileHTML, `#timeline li:first-child .diagnostic`: hostileText} {
		got, err := chromedp.Run(ctx, chromedp.TextContent(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("%s: %v", sel, err)
		}
		if got != want {
			t.Errorf("%s shows %q, want %q", sel, got, want)
		}
	}
	check("the message", "Message to "+hostileEmail+" · postroom console")

	err = chromedp.Do(ctx,
		chromedp.Navigate(f.srv.URL+prefix+"/template?id=hostile"),
		chromedp.WaitVisible(chromedp.CSS(`#subject`)),
		chromedp.SetValue(chromedp.CSS(`#subject`), hostileHTML),
		chromedp.SetValue(chromedp.CSS(`#params`), `{"x": "<img src=x onerror=\"document.title='pwned'\">"}`),
		chromedp.Click(chromedp.CSS(`#render`)),
		chromedp.WaitVisible(chromedp.CSS(`#rendered`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	subject, err := chromedp.Run(ctx, chromedp.TextContent(chromedp.CSS(`#rendered-subject`)))
	if err != nil {
		t.Fatal(err)
	}
	if subject != hostileHTML {
		t.Errorf("the rendered subject shows %q, want %q", subject, hostileHTML)
	}
	draft, err := chromedp.Run(ctx, chromedp.TextContent(chromedp.CSS(`#draft`)))
	if err != nil {
		t.Fatal(err)
	}
	if draft != hostileHTML+"{{x}}" {
		t.Errorf("the draft shows %q", draft)
	}
	check("the render", "Template hostile · postroom console")

	if err := chromedp.Do(ctx, chromedp.Navigate(f.srv.URL+prefix+"/suppressions"), chromedp.WaitVisible(chromedp.CSS(`#suppressions`))); err != nil {
		t.Fatal(err)
	}
	check("the suppression list", "Suppression list · postroom console")
}

// TestBrowserRemoveSuppression removes an entry as a person does:
// "Remove…", a confirmation page that changes nothing, then the button.
func TestBrowserRemoveSuppression(t *testing.T) {
	if testing.Short() {
		t.Skip("drives a headless Chromium")
	}
	ctx := browsertest.New(t, 1100, 760)
	f := newFixture(t, nil)
	const bob = "bob@example.net"
	err := chromedp.Do(ctx,
		chromedp.Navigate(f.srv.URL+prefix+"/suppressions?scope=list"),
		chromedp.WaitVisible(chromedp.CSS(`#suppressions`)),
		chromedp.Click(chromedp.CSS(`a.remove`)),
		chromedp.WaitVisible(chromedp.CSS(`#confirm`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	shown, err := chromedp.Run(ctx, chromedp.TextContent(chromedp.CSS(`#confirm-email`)))
	if err != nil {
		t.Fatal(err)
	}
	if shown != bob {
		t.Errorf("the confirmation names %q, want %q", shown, bob)
	}
	if !f.listed(t, bob, postroom.ScopeList) {
		t.Fatal("the confirmation page removed the entry")
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#confirm`)), chromedp.WaitVisible(chromedp.CSS(`#notice`))); err != nil {
		t.Fatal(err)
	}
	notice, err := chromedp.Run(ctx, chromedp.TextContent(chromedp.CSS(`#notice`)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(notice, bob) {
		t.Errorf("the notice says %q", notice)
	}
	if f.listed(t, bob, postroom.ScopeList) {
		t.Error("the entry is still listed")
	}
	if !f.listed(t, ann, postroom.ScopeAll) {
		t.Error("another entry went too")
	}
}

// TestBrowserCrossSitePost: a page of another site whose form posts a
// removal to the console, submitted in the person's browser, is refused
// (403) and removes nothing.
func TestBrowserCrossSitePost(t *testing.T) {
	if testing.Short() {
		t.Skip("drives a headless Chromium")
	}
	ctx := browsertest.New(t, 1100, 760)
	f := newFixture(t, nil)
	target := f.srv.URL + prefix + "/suppression/remove"
	attacker := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><title>win a prize</title>
<form method="post" action="%s"><input type="hidden" name="email" value="%s"><input type="hidden" name="scope" value="all">
<button id="go">Claim</button></form>`, target, ann)
	}))
	defer attacker.Close()
	// Another site: localhost, where the console is at 127.0.0.1.
	site := strings.Replace(attacker.URL, "127.0.0.1", "localhost", 1)
	err := chromedp.Do(ctx,
		chromedp.Navigate(site+"/"),
		chromedp.WaitVisible(chromedp.CSS(`#go`)),
		chromedp.Click(chromedp.CSS(`#go`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, `location.pathname.endsWith("/suppression/remove")`)
	body, err := chromedp.Run(ctx, chromedp.TextContent(chromedp.CSS(`body`)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(body, "cross-origin request") {
		t.Errorf("the console answered %q, want its refusal", body)
	}
	if !f.listed(t, ann, postroom.ScopeAll) {
		t.Error("the cross-site form removed the entry")
	}
}
