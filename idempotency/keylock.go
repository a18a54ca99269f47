package idempotency

import (
	"context"
	"sync"
)

// keyLocks holds keys in this process: what stands in, on SQLite, for
// PostgreSQL's advisory locks. SQLite serves one process (package
// sqlitedb takes the file for it), so the process's own lock is the
// database's. A key is held from tryLock until unlock; nothing is kept
// for a key nobody holds.
type keyLocks struct {
	mu   sync.Mutex
	held map[Key]*keyHold
}

// keyHold is one hold of a key: released is closed when it ends.
type keyHold struct {
	k        Key
	released chan struct{}
}

// tryLock takes k, or returns nil when it is held.
func (l *keyLocks) tryLock(k Key) *keyHold {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held[k] != nil {
		return nil
	}
	if l.held == nil {
		l.held = make(map[Key]*keyHold)
	}
	h := &keyHold{k: k, released: make(chan struct{})}
	l.held[k] = h
	return h
}

// unlock ends h. It does nothing when h has ended already, so that a
// holder whose key was let go (a test's crash) cannot free the key of the
// call that took it over.
func (l *keyLocks) unlock(h *keyHold) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held[h.k] == h {
		delete(l.held, h.k)
		close(h.released)
	}
}

// wait blocks until nobody holds k, or ctx is done.
func (l *keyLocks) wait(ctx context.Context, k Key) error {
	for {
		l.mu.Lock()
		h := l.held[k]
		l.mu.Unlock()
		if h == nil {
			return nil
		}
		select {
		case <-h.released:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
