package outbox

import (
	"sync"

	"github.com/postroom/postroom"
)

// storedCall is a call as its jobs need it: decoded once per process.
// It is read-only once cached.
type storedCall struct {
	op   postroom.Operation
	body postroom.Call // without recipients
}

// callCache keeps the last calls decoded by this process, so that the
// next jobs of a call do not load and decode its body again. It holds at
// most max calls; when full, it forgets the oldest.
type callCache struct {
	mu    sync.Mutex
	max   int
	calls map[string]*storedCall
	order []string // ids, oldest first
}

func newCallCache(max int) *callCache {
	return &callCache{max: max, calls: make(map[string]*storedCall, max)}
}

func (c *callCache) get(id string) *storedCall {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls[id]
}

func (c *callCache) put(id string, sc *storedCall) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.calls[id]; ok {
		return
	}
	if len(c.order) >= c.max {
		delete(c.calls, c.order[0])
		c.order = c.order[1:]
	}
	c.calls[id] = sc
	c.order = append(c.order, id)
}
