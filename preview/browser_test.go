package preview_test

import (
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
	"github.com/postroom/postroom/preview"
)

// screenshotEnv names a file to save the screenshot to as well, for the
// README's picture: POSTROOM_PREVIEW_SCREENSHOT=docs/preview.png.
const screenshotEnv = "POSTROOM_PREVIEW_SCREENSHOT"

// TestBrowser submits the shared workload on the page in headless
// Chromium and checks what a person would see: the recipient list, each
// message's html in its iframe with the logo image loaded, the missing
// param flagged. It saves a screenshot in the test's temp dir.
func TestBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("drives a headless Chromium")
	}
	ctx := browsertest.New(t, 1280, 1000)
	srv := newServer(t, postroom.Options{}, preview.Options{})
	// A remote image in the html: the page's policy must keep the
	// browser from fetching it (no request leaves the page's origin).
	var remoteHits atomic.Int64
	remote := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		remoteHits.Add(1)
	}))
	defer remote.Close()
	body := strings.Replace(workloadBody(t, 3), "</body>", `<img id=\"remote\" src=\"`+remote.URL+`/pixel.png\"></body>`, 1)

	err := chromedp.Do(ctx,
		chromedp.Navigate(srv.URL+prefix+"/"),
		chromedp.WaitVisible(chromedp.CSS(`#body`)),
		chromedp.SetValue(chromedp.CSS(`#body`), body),
		chromedp.SetValue(chromedp.CSS(`#pick`), "0-2"),
		chromedp.Click(chromedp.CSS(`button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`section.recipient`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	items, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('#recipients li')].map(li => li.textContent.trim())`))
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 3 || !strings.Contains(items[0], "user000000@example.org") || !strings.Contains(items[2], "user000002@example.org") {
		t.Errorf("recipient list %q", items)
	}
	missing, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`#r1 mark.missing`)))
	if err != nil {
		t.Fatal(err)
	}
	if missing != "first_name" {
		t.Errorf("recipient 1's missing param shows %q, want first_name", missing)
	}
	frames, err := chromedp.Run(ctx, chromedp.Nodes(chromedp.CSSAll(`iframe.html`)))
	if err != nil {
		t.Fatal(err)
	}
	if len(frames) != 3 {
		t.Fatalf("%d html iframes, want 3", len(frames))
	}
	// Chromium runs each sandboxed iframe (an opaque origin) in a process
	// of its own, as a target of type iframe: the checks attach to it,
	// once the page's load event (which waits for its iframes) has fired.
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.readyState === "complete"`)); err != nil {
		t.Fatal(err)
	}
	infos, err := chromedp.Targets(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var inFrames int
	for _, info := range infos {
		if info.Type != "iframe" {
			continue
		}
		inFrames++
		fctx, cancel := chromedp.NewContext(ctx, chromedp.WithTargetID(info.TargetID))
		defer cancel()
		heading, err := chromedp.Run(fctx, chromedp.Text(chromedp.CSS(`h1`)))
		if err != nil {
			t.Fatalf("iframe %s: the heading: %v", info.TargetID, err)
		}
		if heading == "" || strings.Contains(heading, "{{") {
			t.Errorf("iframe %s: heading %q, want a rendered one", info.TargetID, heading)
		}
		width, err := chromedp.Run(fctx, chromedp.Poll[int](
			`(() => { const img = document.querySelector('img[width="160"]'); return img && img.complete ? img.naturalWidth : 0 })()`))
		if err != nil {
			t.Fatalf("iframe %s: the logo: %v", info.TargetID, err)
		}
		if width <= 0 {
			t.Errorf("iframe %s: the logo did not load (naturalWidth %d)", info.TargetID, width)
		}
	}
	if n := remoteHits.Load(); n != 0 {
		t.Errorf("the browser fetched the message's remote image %d times", n)
	}
	if inFrames != len(frames) {
		t.Errorf("%d iframe targets for %d iframes", inFrames, len(frames))
	}

	// What the README shows: recipient 1, its missing param flagged, and
	// the top of its message.
	if err := chromedp.Do(ctx, chromedp.ScrollIntoView(chromedp.CSS(`#r1`))); err != nil {
		t.Fatal(err)
	}
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "preview.png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (%d bytes)", path, len(png))
	if out := os.Getenv(screenshotEnv); out != "" {
		if err := os.WriteFile(out, png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
