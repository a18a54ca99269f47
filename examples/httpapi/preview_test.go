package main

import (
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/postroom/postroom/internal/testkit/fixture"
)

// TestPreviewFlag checks that -preview serves the page at /preview/, where
// a call is rendered and nothing is delivered, and that the page is absent
// without the flag.
func TestPreviewFlag(t *testing.T) {
	for _, on := range []bool{false, true} {
		cfg := config{NoAuth: true, EMLDir: t.TempDir(), Preview: on}
		srv, _ := startConfig(t, cfg)
		body := string(marshal(t, fixture.Shared(t).Call(2)))
		res, err := http.PostForm(srv+"/preview/", url.Values{"body": {body}})
		if err != nil {
			t.Fatal(err)
		}
		page, _ := io.ReadAll(res.Body)
		res.Body.Close()
		switch {
		case !on && res.StatusCode != http.StatusNotFound:
			t.Errorf("without -preview: %s, want 404", res.Status)
		case on && (res.StatusCode != http.StatusOK || !strings.Contains(string(page), `id="r1"`)):
			t.Errorf("with -preview: %s, page without recipient 1", res.Status)
		}
		if on {
			if files, err := os.ReadDir(cfg.EMLDir); err != nil || len(files) != 0 {
				t.Errorf("the preview delivered %d messages (%v)", len(files), err)
			}
		}
	}
}
