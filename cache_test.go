package postroom

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/postroom/postroom/internal/program"
	"github.com/postroom/postroom/internal/testkit/mimeread"
)

// recorder is a Transport that keeps a copy of each message by recipient.
type recorder struct {
	mu   sync.Mutex
	data map[string][]byte
}

func (r *recorder) Send(_ context.Context, env *Envelope) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.data == nil {
		r.data = map[string][]byte{}
	}
	r.data[env.To[0]] = append([]byte(nil), env.Data...)
	return nil
}

// text returns the text part of the message last sent to addr.
func (r *recorder) text(t *testing.T, addr string) string {
	t.Helper()
	r.mu.Lock()
	data, ok := r.data[addr]
	r.mu.Unlock()
	if !ok {
		t.Fatalf("no message to %s", addr)
	}
	msg := mimeread.Parse(t, data)
	path := "text/plain"
	if slices.Contains(msg.Paths(), "multipart/alternative>text/plain") {
		path = "multipart/alternative>text/plain"
	}
	return string(msg.Find(t, path).Body)
}

// mapStore is a TemplateStore whose templates a test changes between calls.
type mapStore struct {
	mu  sync.Mutex
	src map[string]string
}

func (s *mapStore) Template(_ context.Context, _, id string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	src, ok := s.src[id]
	if !ok {
		return "", ErrTemplateNotFound
	}
	return src, nil
}

func (s *mapStore) put(id, src string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.src[id] = src
}

func newCacheMailer(t *testing.T, opts Options) (*Mailer, *recorder) {
	t.Helper()
	rec := &recorder{}
	opts.Auth = NoAuth{}
	m, err := New(rec, opts)
	if err != nil {
		t.Fatal(err)
	}
	return m, rec
}

// cacheCall is a call to addr with every kind of template: subject, html,
// text, a header with a placeholder and a static one (5 compiles).
func cacheCall(addr, name string) *Call {
	return &Call{
		Key: "k", AccountID: "acct",
		Message: Message{
			FromEmail: "orders@shop.example.com",
			Subject:   "Hello {{name}}", HTML: "<p>Hi {{name}}!</p>", Text: "Hi {{name}}!",
			Headers: []Header{{Name: "X-Who", Value: "{{name}}"}, {Name: "X-Campaign", Value: "c1"}},
		},
		Recipients: []Recipient{{Email: addr, Params: map[string]any{"name": name}}},
	}
}

func sendOK(t *testing.T, m *Mailer, call *Call, stored bool) {
	t.Helper()
	send := m.Send
	if stored {
		send = m.SendTemplate
	}
	res, err := send(t.Context(), call)
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Status != StatusSent {
		t.Fatalf("result %+v", res[0])
	}
}

// TestTemplateCacheCompilesOnce sends the same templates again, through
// both operations, and requires no compile after the first call; with the
// cache off every call compiles every template.
func TestTemplateCacheCompilesOnce(t *testing.T) {
	for _, tc := range []struct {
		name    string
		opts    Options
		perCall int64 // compiles of each call after the first
	}{
		{"cache", Options{}, 0},
		{"cache off by entries", Options{TemplateCacheEntries: -1}, 5},
		{"cache off by bytes", Options{TemplateCacheBytes: -1}, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := tc.opts
			opts.Templates = &mapStore{src: map[string]string{"h": "<p>Hi {{name}}!</p>", "t": "Hi {{name}}!"}}
			m, rec := newCacheMailer(t, opts)
			sendOK(t, m, cacheCall("a@example.com", "Ann"), false)
			if got := m.cache.compiles.Load(); got != 5 {
				t.Fatalf("first call: %d compiles, want 5", got)
			}
			sendOK(t, m, cacheCall("b@example.com", "Bob"), false)
			if got := rec.text(t, "b@example.com"); got != "Hi Bob!" {
				t.Errorf("second call's text %q", got)
			}
			// The same sources through message.send_template.
			call := cacheCall("c@example.com", "Cy")
			call.Message.HTML, call.Message.Text = "", ""
			call.Message.HTMLTemplateID, call.Message.TextTemplateID = "h", "t"
			sendOK(t, m, call, true)
			if got := rec.text(t, "c@example.com"); got != "Hi Cy!" {
				t.Errorf("third call's text %q", got)
			}
			if got, want := m.cache.compiles.Load(), 5+2*tc.perCall; got != want {
				t.Errorf("three calls: %d compiles, want %d", got, want)
			}
		})
	}
}

// TestTemplateCacheStoreChange changes a stored template between calls:
// the next call renders the new content, and compiles only it.
func TestTemplateCacheStoreChange(t *testing.T) {
	store := &mapStore{src: map[string]string{"t": "v1 {{name}}"}}
	m, rec := newCacheMailer(t, Options{Templates: store})
	call := func(name string) *Call {
		c := cacheCall("a@example.com", name)
		c.Message.HTML, c.Message.Text, c.Message.Headers = "", "", nil
		c.Message.TextTemplateID = "t"
		return c
	}
	for i, step := range []struct {
		src, want string
		compiles  int64
	}{
		{"v1 {{name}}", "v1 Ann", 2}, // subject and text
		{"v2 {{name}}", "v2 Ann", 3},
		{"v2 {{name}}", "v2 Ann", 3},
		{"v1 {{name}}", "v1 Ann", 3}, // still cached
	} {
		store.put("t", step.src)
		sendOK(t, m, call("Ann"), true)
		if got := rec.text(t, "a@example.com"); got != step.want {
			t.Errorf("step %d: text %q, want %q", i, got, step.want)
		}
		if got := m.cache.compiles.Load(); got != step.compiles {
			t.Errorf("step %d: %d compiles in all, want %d", i, got, step.compiles)
		}
	}
}

// TestTemplateCacheModes compiles one source as html and as text: two
// programs, since html escapes and text does not.
func TestTemplateCacheModes(t *testing.T) {
	m, rec := newCacheMailer(t, Options{})
	call := cacheCall("a@example.com", "A & B")
	call.Message.HTML = "{{name}}"
	call.Message.Text = "{{name}}"
	sendOK(t, m, call, false)
	if got := rec.text(t, "a@example.com"); got != "A & B" {
		t.Errorf("text %q: the html program was used", got)
	}
	if got := m.cache.compiles.Load(); got != 4 { // text and X-Who share theirs
		t.Errorf("%d compiles, want 4", got)
	}
}

// TestTemplateCacheErrorsNotKept sends a template that does not compile
// twice: both calls fail alike, and it is compiled each time.
func TestTemplateCacheErrorsNotKept(t *testing.T) {
	m, _ := newCacheMailer(t, Options{})
	for i := range 2 {
		call := cacheCall("a@example.com", "Ann")
		call.Message.Text = "{{#if a}}"
		_, err := m.Send(t.Context(), call)
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != "message.text" || !errors.Is(err, ErrTemplateSyntax) {
			t.Fatalf("call %d: %v, want a syntax error on message.text", i, err)
		}
		if got, want := m.cache.compiles.Load(), int64(5+i); got != want {
			t.Errorf("call %d: %d compiles, want %d", i, got, want)
		}
	}
}

// compileCount compiles src in Text mode through c and counts the compiles.
func compileCount(t *testing.T, c *templateCache, n *int, bounds cacheBounds, src string) *program.Program {
	t.Helper()
	p, err := c.compile(t.Context(), cacheKey{program.Text, src}, bounds, func() (*program.Program, error) {
		*n++
		return program.Compile(t.Context(), src, program.Options{Mode: program.Text})
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestTemplateCacheBounds fills caches past their bounds: the least
// recently used entries go, and the cache stays within both bounds.
func TestTemplateCacheBounds(t *testing.T) {
	t.Run("entries", func(t *testing.T) {
		var c templateCache
		n := 0
		b := cacheBounds{entries: 2, bytes: 1 << 20}
		for _, src := range []string{"a", "b", "a", "c"} { // b is the least recently used when c comes
			compileCount(t, &c, &n, b, src)
		}
		if n != 3 || len(c.entries) != 2 {
			t.Fatalf("%d compiles, %d entries; want 3 and 2", n, len(c.entries))
		}
		compileCount(t, &c, &n, b, "a")
		if n != 3 {
			t.Errorf("a was dropped")
		}
		compileCount(t, &c, &n, b, "b")
		if n != 4 {
			t.Errorf("b was kept beyond the bound")
		}
	})
	t.Run("bytes", func(t *testing.T) {
		var c templateCache
		n := 0
		b := cacheBounds{entries: 100, bytes: 2 * entrySize("xx")}
		for _, src := range []string{"aa", "bb", "cc"} {
			compileCount(t, &c, &n, b, src)
			if c.bytes > b.bytes {
				t.Fatalf("%d bytes held, bound %d", c.bytes, b.bytes)
			}
		}
		if len(c.entries) != 2 {
			t.Errorf("%d entries, want 2", len(c.entries))
		}
		big := strings.Repeat("x", b.bytes)
		compileCount(t, &c, &n, b, big)
		compileCount(t, &c, &n, b, big)
		if n != 5 || c.bytes > b.bytes {
			t.Errorf("a template over the bound: %d compiles (want 5), %d bytes held", n, c.bytes)
		}
	})
}

// TestTemplateCacheConcurrentMisses has callers miss on one key while its
// compile is held in flight: it runs once and they all get its Program.
func TestTemplateCacheConcurrentMisses(t *testing.T) {
	var c templateCache
	b := cacheBounds{entries: 10, bytes: 1 << 20}
	key := cacheKey{program.Text, "{{x}}"}
	started, release := make(chan struct{}), make(chan struct{})
	var compiles int
	compile := func() (*program.Program, error) {
		compiles++ // only ever one caller at a time, else -race reports it
		close(started)
		<-release
		return program.Compile(context.Background(), key.src, program.Options{Mode: program.Text})
	}
	const n = 8
	progs := make([]*program.Program, n)
	var wg sync.WaitGroup
	wg.Go(func() { progs[0], _ = c.compile(t.Context(), key, b, compile) })
	<-started
	for i := 1; i < n; i++ {
		wg.Go(func() { progs[i], _ = c.compile(t.Context(), key, b, compile) })
	}
	for c.waits.Load() < n-1 {
		runtime.Gosched() // until every caller waits on the compile in flight
	}
	close(release)
	wg.Wait()
	if compiles != 1 {
		t.Fatalf("%d compiles, want 1", compiles)
	}
	for i, p := range progs {
		if p == nil || p != progs[0] {
			t.Fatalf("caller %d got %p, the compile %p", i, p, progs[0])
		}
	}
}

// TestTemplateCacheCanceledCompile stops the compiling caller's ctx while
// another waits: the waiter compiles for itself, and a waiter whose own ctx
// ends stops waiting.
func TestTemplateCacheCanceledCompile(t *testing.T) {
	var c templateCache
	b := cacheBounds{entries: 10, bytes: 1 << 20}
	key := cacheKey{program.Text, "{{x}}"}
	started, release := make(chan struct{}), make(chan struct{})
	canceled := func() (*program.Program, error) {
		close(started)
		<-release
		return nil, context.Canceled
	}
	var first error
	var wg sync.WaitGroup
	wg.Go(func() { _, first = c.compile(t.Context(), key, b, canceled) })
	<-started

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := c.compile(ctx, key, b, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("waiter with a done ctx: %v", err)
	}

	var second *program.Program
	compiled := false
	wg.Go(func() {
		second, _ = c.compile(t.Context(), key, b, func() (*program.Program, error) {
			compiled = true
			return program.Compile(t.Context(), key.src, program.Options{Mode: program.Text})
		})
	})
	for c.waits.Load() < 2 {
		runtime.Gosched()
	}
	close(release)
	wg.Wait()
	if !errors.Is(first, context.Canceled) || !compiled || second == nil {
		t.Fatalf("first %v; second compiled %v, got %p", first, compiled, second)
	}
}

// TestTemplateCacheShared sends concurrently through one Mailer whose
// cached programs every call shares, each call with its own params (run
// with -race): every message carries its own recipient's values.
func TestTemplateCacheShared(t *testing.T) {
	m, rec := newCacheMailer(t, Options{Concurrency: 4})
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 10 {
				name := fmt.Sprintf("n%d-%d", g, i)
				call := cacheCall(name+"@example.com", name)
				call.Recipients = append(call.Recipients, Recipient{Email: "x" + name + "@example.com", Params: map[string]any{"name": "x" + name}})
				if _, err := m.Send(t.Context(), call); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	for g := range 4 {
		for i := range 10 {
			name := fmt.Sprintf("n%d-%d", g, i)
			for _, n := range []string{name, "x" + name} {
				if got := rec.text(t, n+"@example.com"); got != "Hi "+n+"!" {
					t.Errorf("%s: text %q", n, got)
				}
			}
		}
	}
	if got := m.cache.compiles.Load(); got != 5 {
		t.Errorf("%d compiles for 40 calls of the same 5 templates", got)
	}
}

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
