package idempotency

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/postroom/postroom"
)

// Memory is a Store in this process's memory: for one instance, and for
// tests. Its records die with the process, so it protects against clients
// that retry, not against crashes; use SQL when instances share the work
// or must survive a restart.
//
// Memory starts no goroutine: records past the retention window are
// ignored by Claim, and freed only by DeleteExpired, which the application
// calls from time to time (say hourly). Use NewMemory; the zero value is
// not usable. A Memory is safe for concurrent use.
type Memory struct {
	opts Options

	mu      sync.Mutex
	records map[Key]*memRecord
}

// memRecord is one key's record. Its fields are guarded by Memory.mu.
type memRecord struct {
	hash    Hash
	started time.Time
	entries map[int]Entry
	// holder is the live Claim's number, or 0; gen counts the claims, so
	// that a claim taken over has its writes refused.
	holder, gen uint64
	// released is closed when the holder releases the key.
	released chan struct{}
}

// NewMemory returns an empty Memory store with opts.
func NewMemory(opts Options) (*Memory, error) {
	if err := opts.setDefaults("idempotency.NewMemory"); err != nil {
		return nil, err
	}
	return &Memory{opts: opts, records: make(map[Key]*memRecord)}, nil
}

// Claim takes k for one call with payload h; see Store.
func (s *Memory) Claim(ctx context.Context, k Key, h Hash) (Claim, error) {
	if err := k.Check(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	now := s.opts.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.records[k]
	switch {
	case r != nil && r.holder != 0:
		return nil, ErrInProgress
	case r == nil:
		r = &memRecord{hash: h, started: now, entries: map[int]Entry{}}
		s.records[k] = r
	case len(r.entries) == 0 || s.expired(r.started, now):
		r.hash, r.started, r.entries = h, now, map[int]Entry{}
	case r.hash != h:
		return nil, ErrConflict
	}
	r.gen++
	r.holder = r.gen
	r.released = make(chan struct{})
	entries := slices.SortedFunc(maps.Values(r.entries), func(a, b Entry) int { return cmp.Compare(a.Index, b.Index) })
	return &memClaim{s: s, k: k, r: r, gen: r.gen, entries: entries}, nil
}

// expired reports whether a call started at started is past the
// retention window at now.
func (s *Memory) expired(started, now time.Time) bool {
	return !started.Add(s.opts.Retention).After(now)
}

// Wait blocks until no call holds k, or ctx is done.
func (s *Memory) Wait(ctx context.Context, k Key) error {
	s.mu.Lock()
	r := s.records[k]
	var released chan struct{}
	if r != nil && r.holder != 0 {
		released = r.released
	}
	s.mu.Unlock()
	if released == nil {
		return nil
	}
	select {
	case <-released:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// DeleteExpired deletes the records of the calls started before before,
// except those whose call still runs.
func (s *Memory) DeleteExpired(ctx context.Context, before time.Time) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for k, r := range s.records {
		if r.holder == 0 && r.started.Before(before) {
			delete(s.records, k)
			n++
		}
	}
	return n, nil
}

// memClaim is a Claim on a Memory record.
type memClaim struct {
	s       *Memory
	k       Key
	r       *memRecord
	gen     uint64
	entries []Entry
}

func (c *memClaim) Entries() []Entry { return c.entries }

// write applies f to the record if c still holds it.
func (c *memClaim) write(ctx context.Context, f func(r *memRecord) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	if c.r.holder != c.gen || c.s.records[c.k] != c.r {
		return errClaimLost
	}
	return f(c.r)
}

func (c *memClaim) HandOver(ctx context.Context, i int, sendID string) error {
	return c.write(ctx, func(r *memRecord) error {
		if _, ok := r.entries[i]; ok {
			return fmt.Errorf("idempotency: recipient %d is already recorded", i)
		}
		r.entries[i] = Entry{Index: i, Result: postroom.Result{SendID: sendID}}
		return nil
	})
}

func (c *memClaim) Finish(ctx context.Context, i int, res postroom.Result) error {
	return c.write(ctx, func(r *memRecord) error {
		if e, ok := r.entries[i]; ok && e.Final() {
			return fmt.Errorf("idempotency: recipient %d already has a final result", i)
		}
		r.entries[i] = Entry{Index: i, Result: postroom.Result{Status: res.Status, Reason: res.Reason, Code: res.Code, SendID: res.SendID}}
		return nil
	})
}

func (c *memClaim) Release(context.Context) error {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	if c.r.holder != c.gen {
		return nil // taken over: the key is someone else's now
	}
	c.r.holder = 0
	close(c.r.released)
	if len(c.r.entries) == 0 && c.s.records[c.k] == c.r {
		delete(c.s.records, c.k)
	}
	return nil
}
