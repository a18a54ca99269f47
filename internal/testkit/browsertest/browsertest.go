// Package browsertest starts a headless Chromium for the module's browser
// tests, driven with chromedp: a page tested as a person would use it. A
// test whose machine has no Chromium skips naming its install command
// (fails under CI=true). It is for the module's tests only.
package browsertest

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/postroom/postroom/internal/testkit/testenv"
)

// ChromiumPath is Debian's chromium package.
const ChromiumPath = "/usr/bin/chromium"

// New starts headless Chromium with an empty profile and a window of
// width by height pixels, and returns a chromedp context for one tab,
// bounded by two minutes (a browser that stops answering fails the test
// instead of hanging it). Chromium stops when t ends. It skips t when
// Chromium is not installed (fails it under CI=true).
func New(t *testing.T, width, height int) context.Context {
	t.Helper()
	if _, err := os.Stat(ChromiumPath); err != nil {
		testenv.Missing(t, ChromiumPath+" is missing", "apt-get install chromium")
	}
	actx, cancel := chromedp.NewExecAllocator(t.Context(),
		chromedp.ExecPath(ChromiumPath),
		chromedp.Headless,
		chromedp.NoSandbox, // the tests run as root
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(width, height),
	)
	t.Cleanup(cancel)
	ctx, cancelTab := chromedp.NewContext(actx)
	t.Cleanup(cancelTab)
	ctx, cancelTimeout := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(cancelTimeout)
	return ctx
}
