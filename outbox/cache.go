package outbox

// The calls a worker process keeps decoded and prepared: loaded once
// (load), prepared once (storedCall.prepare), run once per batch (send).

import (
	"container/list"
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/riverqueue/river"

	"github.com/postroom/postroom"
)

// storedCall is a call as its jobs need it: its body and every recipient,
// decoded once per process, and prepared once (postroom.Prepared). It is
// read-only once loaded, but for prepared, set once.
type storedCall struct {
	op   postroom.Operation
	call *postroom.Call // the whole call: the jobs' indexes are its own
	size int            // the bytes of its stored JSON (body and recipients)

	prepared  atomic.Pointer[postroom.Prepared]
	preparing chan struct{} // a one-slot lock: one prepare at a time
}

func newStoredCall(op postroom.Operation, call *postroom.Call, size int) *storedCall {
	return &storedCall{op: op, call: call, size: size, preparing: make(chan struct{}, 1)}
}

// prepare returns the call prepared by m: prepared once, by the first job
// of the call in this process to ask, which the others wait for. A refusal
// is not kept: the next job asks again (a template store unreachable now
// may answer later; a call refused for good is refused again).
func (sc *storedCall) prepare(ctx context.Context, m *postroom.Mailer) (*postroom.Prepared, error) {
	if p := sc.prepared.Load(); p != nil {
		return p, nil
	}
	select {
	case sc.preparing <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-sc.preparing }()
	if p := sc.prepared.Load(); p != nil {
		return p, nil
	}
	p, err := m.Prepare(ctx, sc.op, sc.call)
	if err != nil {
		return nil, err
	}
	sc.prepared.Store(p)
	return p, nil
}

// callCache keeps the calls this process has loaded, prepared, so that the
// next batches and jobs of a call neither load, decode nor prepare it
// again: a 25,000-recipient call is loaded and prepared once per process,
// not once per job or batch. It holds at most maxCalls calls and maxBytes
// bytes of their stored JSON (Options.CachedCalls, CachedCallBytes); past
// either, it forgets the least recently used. A call larger than maxBytes
// alone is not kept: each of its jobs loads and prepares it once, for all
// its batches. Concurrent gets of a call not cached wait for one load.
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

// send sends recipients idx of sc's call: one run of its Prepared, taken
// from the cache (prepared by the first batch of the call in this
// process), after a new check of the call's key (Options.Auth), so that a
// key revoked mid-call stops the batches after it. No results: the call
// was refused as a whole.
func (o *Outbox) send(ctx context.Context, sc *storedCall, idx []int32) ([]postroom.Result, error) {
	p, err := sc.prepare(ctx, o.m)
	if err == nil {
		err = p.Authenticate(ctx)
	}
	if err != nil {
		return nil, err
	}
	indexes := make([]int, len(idx))
	for k, i := range idx {
		indexes[k] = int(i)
	}
	return p.RunSome(ctx, indexes, postroom.RunOptions{})
}

// load returns the whole call, from the cache or decoded from its rows:
// its body and every job's recipients.
func (o *Outbox) load(ctx context.Context, id string, op postroom.Operation) (*storedCall, error) {
	return o.cache.get(ctx, id, func(ctx context.Context) (*storedCall, error) {
		var body []byte
		var n int32
		if err := o.pool.QueryRow(ctx, `SELECT body, recipients FROM postroom_outbox_calls WHERE id = $1`, id).Scan(&body, &n); err != nil {
			return nil, fmt.Errorf("outbox: load call %s: %w", id, err)
		}
		call := new(postroom.Call)
		if err := json.Unmarshal(body, call); err != nil {
			return nil, river.JobCancel(&unreadableError{what: "call", callID: id, err: err})
		}
		rows, err := o.pool.Query(ctx, `SELECT first, recipients FROM postroom_outbox_chunks WHERE call_id = $1 ORDER BY first`, id)
		if err != nil {
			return nil, fmt.Errorf("outbox: load call %s: %w", id, err)
		}
		defer rows.Close()
		call.Recipients = make([]postroom.Recipient, 0, n)
		size := len(body)
		for rows.Next() {
			var first int32
			var chunk []byte
			if err := rows.Scan(&first, &chunk); err != nil {
				return nil, fmt.Errorf("outbox: load call %s: %w", id, err)
			}
			var rs []postroom.Recipient
			err := json.Unmarshal(chunk, &rs)
			if err == nil && int(first) != len(call.Recipients) {
				err = fmt.Errorf("a job's recipients from %d after %d recipients", first, len(call.Recipients))
			}
			if err != nil {
				return nil, river.JobCancel(&unreadableError{what: "recipients", callID: id, err: err})
			}
			call.Recipients = append(call.Recipients, rs...)
			size += len(chunk)
		}
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("outbox: load call %s: %w", id, err)
		}
		if len(call.Recipients) != int(n) {
			err := fmt.Errorf("%d recipients stored for a call of %d", len(call.Recipients), n)
			return nil, river.JobCancel(&unreadableError{what: "recipients", callID: id, err: err})
		}
		return newStoredCall(op, call, size), nil
	})
}
