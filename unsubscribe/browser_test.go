package unsubscribe_test

import (
	"bytes"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/testkit/browsertest"
)

// TestBrowser uses the page as a person does, in headless Chromium, with
// an address and a list id written to attack it: both show as the text
// they are, no markup of theirs runs or fetches anything, the page's
// style applies (its policy allows it by hash); "Unsubscribe from this
// list" records the list alone, and, loaded again, "Unsubscribe from all
// lists" every list. It saves a screenshot in the test's temp dir.
func TestBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("drives a headless Chromium")
	}
	ctx := browsertest.New(t, 900, 700)
	f := newFixture(t, oldKey)
	var remoteHits atomic.Int64
	remote := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { remoteHits.Add(1) }))
	defer remote.Close()
	// No space in either: the suppression list takes the address.
	address := `"<img/src=` + remote.URL + `/a.png/onerror=document.title=1>"@example.com`
	const list = "x'onmouseover=document.title=1//&lt{{.}}.example"
	tok, err := f.u.Token("acct-1", address, list)
	if err != nil {
		t.Fatal(err)
	}

	// load opens the page and checks what it shows.
	load := func() {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.Navigate(f.url(tok)), chromedp.WaitVisible(chromedp.CSS(`#all-lists button`))); err != nil {
			t.Fatal(err)
		}
		for sel, want := range map[string]string{`#address`: address, `#list`: list, `title`: "Unsubscribe"} {
			got, err := chromedp.Run(ctx, chromedp.TextContent(chromedp.CSS(sel)))
			if err != nil {
				t.Fatalf("%s: %v", sel, err)
			}
			if got != want {
				t.Errorf("%s shows %q, want %q", sel, got, want)
			}
		}
		state, err := chromedp.Run(ctx, chromedp.Evaluate[[]any](
			`[document.title, document.images.length, document.scripts.length, getComputedStyle(document.body).maxWidth, document.querySelectorAll('[onerror],[onmouseover]').length]`))
		if err != nil {
			t.Fatal(err)
		}
		if state[0] != "Unsubscribe" || state[1] != 0.0 || state[2] != 0.0 || state[3] == "none" || state[4] != 0.0 {
			t.Errorf("title, images, scripts, body max-width, elements with handlers: %v; want Unsubscribe, 0, 0, a width, 0", state)
		}
	}
	// choose clicks a form's button and returns the text of the page
	// after it.
	choose := func(form string) string {
		t.Helper()
		err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#`+form+` button`)), chromedp.WaitVisible(chromedp.CSS(`#done`)))
		if err != nil {
			t.Fatalf("clicking %s: %v", form, err)
		}
		body, err := chromedp.Run(ctx, chromedp.TextContent(chromedp.CSS(`body`)))
		if err != nil {
			t.Fatal(err)
		}
		return body
	}

	load()
	if obs, _ := f.recorded(); len(obs) != 0 {
		t.Fatalf("loading the page recorded %+v", obs)
	}
	if body := choose("this-list"); !strings.Contains(body, list) || !strings.Contains(body, address) {
		t.Errorf("after this list, the page says %q", body)
	}
	obs, events := f.recorded()
	if len(obs) != 1 || obs[0].Scope != postroom.ScopeList || obs[0].List != list || obs[0].Address != address || len(events) != 1 || events[0].List != list {
		t.Fatalf("after this list: observations %+v, events %+v, want one of list %q", obs, events, list)
	}
	if r := f.listed(t, "acct-1", address); r != postroom.ReasonUnsub {
		t.Errorf("after this list, the address is listed as %q, want unsub", r)
	}

	load()
	png1, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	if body := choose("all-lists"); !strings.Contains(body, "this sender's lists") || strings.Contains(body, list) {
		t.Errorf("after all lists, the page says %q", body)
	}
	obs, events = f.recorded()
	if len(obs) != 2 || obs[1].Scope != postroom.ScopeLists || obs[1].List != "" || len(events) != 2 || events[1].List != "" {
		t.Fatalf("after all lists: observations %+v, events %+v, want a second of all lists", obs, events)
	}
	if n := remoteHits.Load(); n != 0 {
		t.Errorf("the page fetched the address's image %d times", n)
	}

	img, err := png.Decode(bytes.NewReader(png1))
	if err != nil {
		t.Fatalf("the screenshot: %v", err)
	}
	if b := img.Bounds(); b.Dx() < 100 || b.Dy() < 100 {
		t.Errorf("the screenshot is %v", b)
	}
	path := filepath.Join(t.TempDir(), "unsubscribe.png")
	if err := os.WriteFile(path, png1, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (%d bytes)", path, len(png1))
}
