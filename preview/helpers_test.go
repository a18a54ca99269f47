package preview_test

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/testkit/fixture"
	"github.com/postroom/postroom/preview"
)

// prefix is where the tests mount the page, to check that it works under
// http.StripPrefix.
const prefix = "/admin/preview"

// refuseTransport fails the test if anything is handed to it.
func refuseTransport(t *testing.T) postroom.Transport {
	return postroom.TransportFunc(func(_ context.Context, _ *postroom.Envelope) error {
		t.Error("the preview called the transport")
		return errors.New("not allowed")
	})
}

// newServer serves the page of a Mailer with opts (NoAuth when opts has
// no Auth) under prefix.
func newServer(t *testing.T, opts postroom.Options, popts preview.Options) *httptest.Server {
	t.Helper()
	if opts.Auth == nil {
		opts.Auth = postroom.NoAuth{}
	}
	m, err := postroom.New(refuseTransport(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	page, err := preview.New(m, popts)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle(prefix+"/", http.StripPrefix(prefix, page))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// workloadBody is the shared workload's call with n recipients as JSON,
// recipient 1 lacking first_name.
func workloadBody(t *testing.T, n int) string {
	t.Helper()
	call := fixture.Shared(t).Call(n)
	if n > 1 {
		p := maps.Clone(call.Recipients[1].Params)
		delete(p, "first_name")
		call.Recipients[1].Params = p
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(call); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
