package httpapi

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/testkit/fixture"
)

// TestNewOptions: New refuses each bad field with a *postroom.OptionsError naming
// it, and accepts the zero Options.
func TestNewOptions(t *testing.T) {
	m, err := postroom.New(postroom.TransportFunc(func(context.Context, *postroom.Envelope) error { return nil }), postroom.Options{Auth: postroom.NoAuth{}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(m, Options{}); err != nil {
		t.Fatalf("zero Options: %v", err)
	}
	if _, err := New(nil, Options{}); err == nil {
		t.Error("nil Mailer accepted")
	}
	for _, tc := range []struct {
		field string
		opts  Options
	}{
		{"MaxBodyBytes", Options{MaxBodyBytes: -1}},
		{"MaxInflightBytes", Options{MaxInflightBytes: -1}},
		{"MaxInflightBytes", Options{MaxBodyBytes: 2048, MaxInflightBytes: 1024}},
		{"MaxInflightBytes", Options{MaxInflightBytes: DefaultMaxBodyBytes - 1}},
		{"CallTimeout", Options{CallTimeout: -1}},
		{"MaxIdempotentCalls", Options{MaxIdempotentCalls: -1}},
		{"PreviewPath", Options{PreviewPath: "preview/"}},
		{"PreviewPath", Options{PreviewPath: "/preview"}},
		{"PreviewPath", Options{PreviewPath: "/"}},
		{"PreviewPath", Options{PreviewPath: "/api/preview/"}},
	} {
		_, err := New(m, tc.opts)
		if oe := (*postroom.OptionsError)(nil); !errors.As(err, &oe) || oe.Op != "httpapi.New" || oe.Field != "Options."+tc.field {
			t.Errorf("%+v: %v; want a *postroom.OptionsError for Options.%s", tc.opts, err, tc.field)
		}
	}
}

// TestPreview: Options.PreviewPath serves the preview page there, where a
// call is rendered and nothing is delivered; without it, the path is the
// API's 404.
func TestPreview(t *testing.T) {
	for _, path := range []string{"", "/preview/", "/admin/mail/preview/"} {
		t.Run(path, func(t *testing.T) {
			delivered := 0
			count := postroom.TransportFunc(func(context.Context, *postroom.Envelope) error { delivered++; return nil })
			base, _ := startHandler(t, count, postroom.Options{}, Options{PreviewPath: path})
			body := string(marshal(t, fixture.Shared(t).Call(2)))
			at := path
			if at == "" {
				at = "/preview/"
			}
			res, err := http.PostForm(base+at, url.Values{"body": {body}})
			if err != nil {
				t.Fatal(err)
			}
			page, _ := io.ReadAll(res.Body)
			res.Body.Close()
			switch {
			case path == "" && res.StatusCode != http.StatusNotFound:
				t.Errorf("without PreviewPath: %s, want 404", res.Status)
			case path != "" && (res.StatusCode != http.StatusOK || !strings.Contains(string(page), `id="r1"`)):
				t.Errorf("at %s: %s, page without recipient 1", path, res.Status)
			}
			if delivered != 0 {
				t.Errorf("the preview delivered %d messages", delivered)
			}
		})
	}
}
