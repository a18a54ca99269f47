package outbox

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/postroom/postroom"
)

// loader returns a load function of a call of size bytes that counts its
// calls.
func loader(n *atomic.Int64, size int) func(context.Context) (*storedCall, error) {
	return func(context.Context) (*storedCall, error) {
		n.Add(1)
		return &storedCall{op: postroom.OpSend, size: size}, nil
	}
}

func TestCallCacheBounds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name               string
		maxCalls, maxBytes int
		sizes              []int // calls "0", "1", ... loaded in order
		kept               []string
	}{
		{"by count, least recently used first", 2, 1 << 20, []int{1, 1, 1}, []string{"1", "2"}},
		{"by bytes", 10, 100, []int{60, 30, 30}, []string{"1", "2"}},
		{"a call over the bytes alone is not kept", 10, 100, []int{10, 101}, []string{"0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCallCache(tt.maxCalls, tt.maxBytes)
			var loads atomic.Int64
			for i, size := range tt.sizes {
				sc, err := c.get(t.Context(), fmt.Sprint(i), loader(&loads, size))
				if err != nil || sc == nil || sc.size != size {
					t.Fatalf("get %d: %v, %v", i, sc, err)
				}
			}
			var kept []string
			for el := c.lru.Back(); el != nil; el = el.Prev() {
				kept = append(kept, el.Value.(*cacheEntry).id)
			}
			if fmt.Sprint(kept) != fmt.Sprint(tt.kept) {
				t.Errorf("kept %v, want %v", kept, tt.kept)
			}
			bytes := 0
			for _, id := range kept {
				bytes += c.calls[id].Value.(*cacheEntry).sc.size
			}
			if c.bytes != bytes || c.bytes > tt.maxBytes {
				t.Errorf("counted %d bytes, hold %d (bound %d)", c.bytes, bytes, tt.maxBytes)
			}
			// What is kept is not loaded again.
			before := loads.Load()
			for _, id := range kept {
				if _, err := c.get(t.Context(), id, loader(&loads, 1)); err != nil {
					t.Fatal(err)
				}
			}
			if n := loads.Load() - before; n != 0 {
				t.Errorf("%d loads of cached calls", n)
			}
		})
	}
}

// TestCallCacheLRU: a get makes a call the most recently used.
func TestCallCacheLRU(t *testing.T) {
	t.Parallel()
	c := newCallCache(2, 1<<20)
	var loads atomic.Int64
	for _, id := range []string{"a", "b", "a", "c"} {
		if _, err := c.get(t.Context(), id, loader(&loads, 1)); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok := c.calls["b"]; ok {
		t.Error("b kept, the least recently used")
	}
	if _, ok := c.calls["a"]; !ok {
		t.Error("a forgotten, though used after b")
	}
}

// TestCallCacheOneLoad: concurrent gets of a call wait for one load; a
// failed load is not kept.
func TestCallCacheOneLoad(t *testing.T) {
	t.Parallel()
	c := newCallCache(4, 1<<20)
	var loads atomic.Int64
	release := make(chan struct{})
	slow := func(ctx context.Context) (*storedCall, error) {
		<-release
		return loader(&loads, 1)(ctx)
	}
	var wg sync.WaitGroup
	got := make([]*storedCall, 8)
	for k := range got {
		wg.Go(func() {
			sc, err := c.get(t.Context(), "x", slow)
			if err != nil {
				t.Error(err)
			}
			got[k] = sc
		})
	}
	close(release)
	wg.Wait()
	if n := loads.Load(); n != 1 {
		t.Errorf("%d loads, want 1", n)
	}
	for _, sc := range got[1:] {
		if sc != got[0] {
			t.Fatal("gets of one call returned different calls")
		}
	}

	errDown := errors.New("down")
	if _, err := c.get(t.Context(), "y", func(context.Context) (*storedCall, error) { return nil, errDown }); !errors.Is(err, errDown) {
		t.Fatalf("err = %v, want the load's", err)
	}
	if _, ok := c.calls["y"]; ok || c.lru.Len() != 1 {
		t.Error("a failed load was kept")
	}
}
