package outbox

// The calls a worker process keeps decoded (load, callCache), and each
// job run's call, prepared by its first batch and run by each batch
// (jobCall).

import (
	"container/list"
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/riverqueue/river"

	"github.com/postroom/postroom"
)

// storedCall is a call's body as its jobs need it: decoded once per
// process. It is read-only once cached.
type storedCall struct {
	op   postroom.Operation
	body postroom.Call // without recipients
	size int           // the bytes of its stored JSON
}

// jobCall is one run of a job: the call's body with the job's
// recipients, prepared (postroom.Mailer.Prepare) by its first batch and
// run by each batch (send). It belongs to the run's goroutine.
type jobCall struct {
	sc    *storedCall
	first int           // the call's index of call.Recipients[0]
	call  postroom.Call // sc.body with the job's recipients
	p     *postroom.Prepared
}

// jobCall returns the run of the job whose recipients, from the call's
// index first, are recipients.
func (sc *storedCall) jobCall(first int, recipients []postroom.Recipient) *jobCall {
	jc := &jobCall{sc: sc, first: first, call: sc.body}
	jc.call.Recipients = recipients
	return jc
}

// send sends the call's recipients idx (indexes in the whole call): one
// run of the job's Prepared (RunSome). The first batch prepares it, which
// authenticates the call, once for the job's run: a key revoked mid-run
// stops the runs that start after it, not the run's later batches. No
// results: the call was refused as a whole (a refusal to prepare is not
// kept: the next batch or run asks again). The hooks' index is the
// position in idx, as the results' is: hooks.OnResult(k, r) is recipient
// idx[k]'s.
func (jc *jobCall) send(ctx context.Context, m *postroom.Mailer, idx []int32, hooks postroom.RunOptions) ([]postroom.Result, error) {
	if jc.p == nil {
		p, err := m.Prepare(ctx, jc.sc.op, &jc.call)
		if err != nil {
			return nil, err
		}
		jc.p = p
	}
	indexes := make([]int, len(idx))
	pos := make([]int, len(jc.call.Recipients)) // pos[indexes[k]] == k
	for k, i := range idx {
		indexes[k] = int(i) - jc.first
		pos[indexes[k]] = k
	}
	o := postroom.RunOptions{CallID: hooks.CallID}
	if hooks.BeforeSend != nil {
		o.BeforeSend = func(ctx context.Context, i int, sendID string) error { return hooks.BeforeSend(ctx, pos[i], sendID) }
	}
	if hooks.OnResult != nil {
		o.OnResult = func(i int, r postroom.Result) { hooks.OnResult(pos[i], r) }
	}
	return jc.p.RunSome(ctx, indexes, o)
}

// callCache keeps the calls' bodies this process has decoded, so that the
// next jobs of a call do not load and decode its body again. It holds at
// most maxCalls calls and maxBytes bytes of their stored JSON
// (Options.CachedCalls, CachedCallBytes); past either, it forgets the
// least recently used. A body larger than maxBytes alone is not kept:
// each job run loads it once. Concurrent gets of a call not cached wait
// for one load.
type callCache struct {
	mu       sync.Mutex
	maxCalls int
	maxBytes int
	bytes    int                      // the sizes of the loaded entries in lru
	calls    map[string]*list.Element // of lru, each a *cacheEntry
	lru      *list.List               // most recently used first
}

// cacheEntry is one call in the cache: loading until ready is closed,
// then sc (or err, and the entry is gone from the cache).
type cacheEntry struct {
	id      string
	ready   chan struct{}
	sc      *storedCall
	err     error
	counted bool // sc.size is in callCache.bytes
}

func newCallCache(maxCalls, maxBytes int) *callCache {
	return &callCache{maxCalls: maxCalls, maxBytes: maxBytes, calls: map[string]*list.Element{}, lru: list.New()}
}

// get returns call id from the cache, or loaded by load (once, whoever
// else asks meanwhile) and then kept. A failed load is not kept: a get
// waiting for it loads again, with its own ctx.
func (c *callCache) get(ctx context.Context, id string, load func(context.Context) (*storedCall, error)) (*storedCall, error) {
	for {
		c.mu.Lock()
		if el, ok := c.calls[id]; ok {
			c.lru.MoveToFront(el)
			e := el.Value.(*cacheEntry)
			c.mu.Unlock()
			select {
			case <-e.ready:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			if e.err == nil {
				return e.sc, nil
			}
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			continue // the load failed: try it again
		}
		e := &cacheEntry{id: id, ready: make(chan struct{})}
		el := c.lru.PushFront(e)
		c.calls[id] = el
		c.mu.Unlock()

		e.sc, e.err = load(ctx)
		c.mu.Lock()
		kept := c.calls[id] == el // not evicted while it loaded
		switch {
		case !kept:
		case e.err != nil || e.sc.size > c.maxBytes:
			c.remove(el)
		default:
			c.bytes += e.sc.size
			e.counted = true
		}
		c.evict()
		c.mu.Unlock()
		close(e.ready)
		return e.sc, e.err
	}
}

// evict forgets the least recently used calls until the cache is within
// its bounds. A call still loading counts as a call, not in bytes.
func (c *callCache) evict() {
	for c.lru.Len() > c.maxCalls || c.bytes > c.maxBytes {
		c.remove(c.lru.Back())
	}
}

// remove takes el out of the cache. Its loader, if it is still loading,
// finds it gone and does not count it.
func (c *callCache) remove(el *list.Element) {
	e := el.Value.(*cacheEntry)
	c.lru.Remove(el)
	delete(c.calls, e.id)
	if e.counted {
		c.bytes -= e.sc.size
		e.counted = false
	}
}

// load returns the call's body, from the cache or decoded from its row.
func (o *Outbox) load(ctx context.Context, id string, op postroom.Operation) (*storedCall, error) {
	return o.cache.get(ctx, id, func(ctx context.Context) (*storedCall, error) {
		var body []byte
		if err := o.db.QueryRow(ctx, `SELECT body FROM postroom_outbox_calls WHERE id = $1`, id).Scan(&body); err != nil {
			return nil, fmt.Errorf("outbox: load call %s: %w", id, err)
		}
		sc := &storedCall{op: op, size: len(body)}
		if err := json.Unmarshal(body, &sc.body); err != nil {
			return nil, river.JobCancel(&unreadableError{what: "call", callID: id, err: err})
		}
		return sc, nil
	})
}
