package postroom

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/postroom/postroom/internal/program"
)

// templateCache holds a Mailer's compiled templates, keyed by their
// content, so that a call whose subject, bodies and header values were all
// seen before compiles nothing. Its zero value is an empty cache, ready to
// use; it is safe for concurrent use. A Program is immutable, so one
// cached Program is rendered by any number of calls at once.
//
// It keeps the most recently used entries within Options.TemplateCacheEntries
// and Options.TemplateCacheBytes (see entrySize). Concurrent misses on the
// same key compile once: the first caller compiles, the others wait for its
// Program (or their own ctx). Only Programs are kept: a source that does
// not compile is compiled again at its next use (the waiters of that
// compile share its *program.Error), and a compile stopped by its caller's
// ctx leaves nothing behind.
//
// Like Mailer.workers, it is state a Mailer changes after New, invisible to
// callers: a cached Program renders exactly what compiling the source again
// would (the key holds everything a compile depends on, see cacheKey).
type templateCache struct {
	mu      sync.Mutex
	entries map[cacheKey]*cacheEntry // compiled and in-flight entries
	// lru lists the compiled entries, most recently used first: lru.next
	// is the newest, lru.prev the oldest. A sentinel, set up on first use.
	lru   cacheEntry
	bytes int // sum of entrySize over the listed entries

	// compiles counts the calls to program.Compile, waits the callers that
	// waited for another's compile: for tests.
	compiles, waits atomic.Int64
}

// cacheKey is what a compile depends on: the source and the mode. The other
// program.Options a Mailer passes (limits, the log function) come from its
// Options and are the same for all its compiles. A compile that comes to
// read anything else (another template it includes, say) must add it to
// the key, or not go through the cache.
type cacheKey struct {
	mode program.Mode
	src  string
}

// cacheEntry is a compiled Program, or a compile in flight whose ready
// channel closes when it ends.
type cacheEntry struct {
	key        cacheKey
	ready      chan struct{}
	done       bool // p and err are set (under mu); ready is closed just after
	p          *program.Program
	err        error
	size       int
	prev, next *cacheEntry
}

// entrySize estimates the bytes an entry holds: the source (the key) and
// the Program, which holds about the source again plus a few hundred bytes
// per mustache (measured on the workload and on mustache-dense sources).
func entrySize(src string) int {
	return 2*len(src) + 512*strings.Count(src, "{{") + 2<<10
}

// cacheBounds are the bounds of a templateCache, from the Mailer's Options.
type cacheBounds struct {
	entries, bytes int
}

// compile returns the Program of key's source in key's mode, from the
// cache when it holds it; compile does the compiling on a miss. The cache
// then keeps it within bounds.
func (c *templateCache) compile(ctx context.Context, key cacheKey, bounds cacheBounds, compile func() (*program.Program, error)) (*program.Program, error) {
	for {
		c.mu.Lock()
		if c.entries == nil {
			c.entries = map[cacheKey]*cacheEntry{}
			c.lru.next, c.lru.prev = &c.lru, &c.lru
		}
		e, ok := c.entries[key]
		if !ok {
			break // c.mu held: compile below
		}
		if e.done {
			c.unlink(e)
			c.pushFront(e)
			c.mu.Unlock()
			return e.p, nil
		}
		c.mu.Unlock()
		c.waits.Add(1)
		select {
		case <-e.ready:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if e.p != nil {
			return e.p, nil
		}
		if pe := (*program.Error)(nil); errors.As(e.err, &pe) {
			return nil, e.err // the same source fails the same way
		}
		// The compiling caller's ctx ended: its entry is gone, try again.
	}
	e := &cacheEntry{key: key, ready: make(chan struct{})}
	c.entries[key] = e
	c.mu.Unlock()

	var p *program.Program
	err := errors.New("postroom: template compile panicked")
	defer func() {
		c.mu.Lock()
		e.p, e.err, e.done = p, err, true
		if p == nil {
			delete(c.entries, key)
		} else {
			e.size = entrySize(key.src)
			c.pushFront(e)
			c.evict(bounds)
		}
		c.mu.Unlock()
		close(e.ready)
	}()
	p, err = compile()
	return p, err
}

// pushFront lists e as the most recently used entry.
func (c *templateCache) pushFront(e *cacheEntry) {
	e.prev, e.next = &c.lru, c.lru.next
	e.prev.next, e.next.prev = e, e
	c.bytes += e.size
}

// unlink takes e out of the list.
func (c *templateCache) unlink(e *cacheEntry) {
	e.prev.next, e.next.prev = e.next, e.prev
	e.prev, e.next = nil, nil
	c.bytes -= e.size
}

// evict drops the least recently used entries until the cache is within
// bounds. The entry just added goes too when it alone exceeds the bytes
// bound. Entries in flight count towards the entries bound but are never
// dropped: their compiles are bounded by the callers' concurrency.
func (c *templateCache) evict(bounds cacheBounds) {
	for c.lru.prev != &c.lru && (len(c.entries) > bounds.entries || c.bytes > bounds.bytes) {
		e := c.lru.prev
		c.unlink(e)
		delete(c.entries, e.key)
	}
}

// compile compiles src in the given mode with the Mailer's limits, through
// its cache unless Options turn it off.
func (m *Mailer) compile(ctx context.Context, src string, mode program.Mode) (*program.Program, error) {
	opts := program.Options{
		Mode:           mode,
		MaxSourceBytes: m.opts.MaxTemplateBytes,
		MaxDepth:       m.opts.MaxTemplateDepth,
		MaxOutputBytes: m.opts.MaxRenderBytes,
		MaxSteps:       m.opts.MaxRenderSteps,
		Log:            m.templateLog,
		Helpers:        m.opts.programHelpers,
	}
	compile := func() (*program.Program, error) {
		m.cache.compiles.Add(1)
		return program.Compile(ctx, src, opts)
	}
	if m.opts.TemplateCacheEntries < 0 || len(src) > m.opts.MaxTemplateBytes {
		return compile()
	}
	return m.cache.compile(ctx, cacheKey{mode, src}, cacheBounds{m.opts.TemplateCacheEntries, m.opts.TemplateCacheBytes}, compile)
}
