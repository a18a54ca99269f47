package postroom

import (
	"strings"
	"testing"
)

// TestPartialsCached sends a template with a partial three times through a
// Mailer's cache while the stored partial changes after the second call: the
// first compiles the call's 5 templates and the partial in each of the
// two modes it is used in (html, text), the second compiles nothing, the
// third compiles the new partial alone, twice, and renders it: the cached
// templates that name it are still right.
func TestPartialsCached(t *testing.T) {
	store := &mapStore{src: map[string]string{"footer": "v1 {{name}}"}}
	m, rec := newCacheMailer(t, Options{Templates: store})
	for i, want := range []struct {
		text     string
		compiles int64
	}{{"Hi v1 Ann", 5 + 2}, {"Hi v1 Ann", 0}, {"Hi v2 Ann", 2}} {
		if i == 2 {
			store.put("footer", "v2 {{name}}")
		}
		call := cacheCall("a@example.com", "Ann")
		call.Message.HTML, call.Message.Text = "<p>{{> footer}}</p>", "Hi {{> footer}}"
		before := m.cache.compiles.Load()
		sendOK(t, m, call, false)
		if n := m.cache.compiles.Load() - before; n != want.compiles {
			t.Errorf("call %d: %d compiles, want %d", i, n, want.compiles)
		}
		if got := strings.TrimSpace(rec.text(t, "a@example.com")); got != want.text {
			t.Errorf("call %d: text %q, want %q", i, got, want.text)
		}
	}
}
