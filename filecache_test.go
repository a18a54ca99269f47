package postroom

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/postroom/postroom/internal/mimemsg"
)

// testContent is n octets of deterministic content as standard base64.
func testContent(n int, seed byte) string {
	data := make([]byte, n)
	for i := range data {
		seed = seed*31 + 7
		data[i] = seed
	}
	return base64.StdEncoding.EncodeToString(data)
}

// unsampled returns an offset of s, away from its last quantum, that the
// file cache's key does not read: two contents that differ only there
// share their key.
func unsampled(t *testing.T, s string) int {
	t.Helper()
	step := (len(s) - 8) / (fileSamples - 1)
	for p := 40; p < len(s)-40; p++ {
		if p%step >= 8 {
			return p
		}
	}
	t.Fatalf("no unsampled offset in %d octets", len(s))
	return 0
}

// TestFileCacheComparesContent checks that a hit is decided by the whole
// content, not by the key: contents crafted to share the key of a cached
// one (one octet changed where the key does not look) get their own lines,
// and one of them that is not base64 is refused, not given the cached
// lines.
func TestFileCacheComparesContent(t *testing.T) {
	m := newInternalMailer(t, Options{})
	a := testContent(30_000, 1)
	p := unsampled(t, a)
	swap := byte('A')
	if a[p] == 'A' {
		swap = 'B'
	}
	b := a[:p] + string(swap) + a[p+1:] // still base64: another content
	bad := a[:p] + "!" + a[p+1:]
	if _, err := m.fileLines(a); err != nil { // sets the cache up
		t.Fatal(err)
	}
	if m.files.key(a) != m.files.key(b) || m.files.key(a) != m.files.key(bad) {
		t.Fatal("the crafted contents do not share their key: the test does not test the compare")
	}
	for i, s := range []string{a, a, b, a, b} {
		got, err := m.fileLines(s)
		if err != nil {
			t.Fatalf("%d: %v", i, err)
		}
		if want := mimemsg.WrapBase64(nil, s); !bytes.Equal(got, want) {
			t.Fatalf("%d: the lines of one content are another's", i)
		}
	}
	for range 2 {
		_, err := m.fileLines(bad)
		var ce base64.CorruptInputError
		if !errors.As(err, &ce) || int(ce) != p {
			t.Fatalf("content with '!' at %d: err = %v, want a CorruptInputError at %d", p, err, p)
		}
	}
}

// TestFileCacheHit checks that a content seen before is given the same
// lines, shared (not checked or wrapped again), also when the content
// comes as another string of the same bytes, as each decoded request
// gives it; and that a cache turned off shares nothing.
func TestFileCacheHit(t *testing.T) {
	a := testContent(5_000, 2)
	m := newInternalMailer(t, Options{})
	first, err := m.fileLines(a)
	if err != nil {
		t.Fatal(err)
	}
	again, err := m.fileLines(strings.Clone(a))
	if err != nil {
		t.Fatal(err)
	}
	if &first[0] != &again[0] {
		t.Error("the second use of a content did not get the cached lines")
	}
	off := newInternalMailer(t, Options{FileCacheBytes: -1})
	x, _ := off.fileLines(a)
	y, _ := off.fileLines(a)
	if &x[0] == &y[0] || !bytes.Equal(x, y) {
		t.Error("with the cache off, two uses must give equal lines, not shared ones")
	}
	if off.files.entries != nil {
		t.Error("the cache turned off holds entries")
	}
}

// TestFileCacheBound checks the bound: the least recently used entries go
// first, the cache never holds more than FileCacheBytes, and a content
// larger than the bound alone is not kept.
func TestFileCacheBound(t *testing.T) {
	contents := []string{testContent(3000, 1), testContent(3000, 2), testContent(3000, 3)}
	one := (&fileEntry{content: contents[0], lines: mimemsg.WrapBase64(nil, contents[0])}).size()
	m := newInternalMailer(t, Options{FileCacheBytes: 2*one + one/2}) // room for two
	lines := func(s string) []byte {
		t.Helper()
		l, err := m.fileLines(s)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	a0 := lines(contents[0])
	lines(contents[1])
	if &lines(contents[0])[0] != &a0[0] { // now the most recently used
		t.Fatal("contents[0] was dropped within the bound")
	}
	lines(contents[2]) // drops contents[1], the least recently used
	if m.files.bytes > m.opts.FileCacheBytes || m.files.lru.Len() != 2 {
		t.Fatalf("%d entries of %d bytes, bound %d", m.files.lru.Len(), m.files.bytes, m.opts.FileCacheBytes)
	}
	if &lines(contents[0])[0] != &a0[0] {
		t.Error("the most recently used entry was dropped")
	}
	if _, _, ok := m.files.lines(contents[1]); ok {
		t.Error("the least recently used entry was kept over the bound")
	}
	big := testContent(4*one, 9)
	lines(big)
	if _, _, ok := m.files.lines(big); ok {
		t.Error("a content larger than the bound was kept")
	}
}

// TestFileCacheConcurrent uses one cache from many goroutines with a bound
// that keeps evicting: every use gets the lines of its own content (run
// with -race).
func TestFileCacheConcurrent(t *testing.T) {
	var contents []string
	for i := range 12 {
		contents = append(contents, testContent(2000+100*i, byte(i)))
	}
	m := newInternalMailer(t, Options{FileCacheBytes: 20_000})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				s := contents[(g*7+i)%len(contents)]
				if i%3 == 0 {
					s = strings.Clone(s)
				}
				got, err := m.fileLines(s)
				if err != nil || !bytes.Equal(got, mimemsg.WrapBase64(nil, s)) {
					t.Errorf("goroutine %d, use %d: wrong lines (%v)", g, i, err)
					return
				}
			}
		})
	}
	wg.Wait()
	if m.files.bytes > m.opts.FileCacheBytes {
		t.Fatalf("the cache holds %d bytes, bound %d", m.files.bytes, m.opts.FileCacheBytes)
	}
}

// newInternalMailer is a Mailer for the tests of this package's internals.
func newInternalMailer(t *testing.T, opts Options) *Mailer {
	t.Helper()
	opts.Auth = NoAuth{}
	m, err := New(TransportFunc(func(context.Context, *Envelope) error { return nil }), opts)
	if err != nil {
		t.Fatal(fmt.Errorf("New: %w", err))
	}
	return m
}
