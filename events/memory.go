package events

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/sendid"
)

// Defaults of MemoryOptions and SQLOptions.
const (
	// DefaultMaxSends is how many sends a Memory keeps.
	DefaultMaxSends = 100_000
	// DefaultRetention is how long a send is kept for its bounces: a
	// bounce that arrives later is dropped as unknown. Mail servers give
	// up on a message after 5 days by default (Postfix's
	// maximal_queue_lifetime), so its bounce arrives within about that.
	DefaultRetention = 7 * 24 * time.Hour
)

// MemoryOptions configure a Memory.
type MemoryOptions struct {
	// MaxSends is how many sends are kept; when full, the oldest is
	// forgotten. Zero means DefaultMaxSends. Each takes about 200 bytes
	// (a call's sends share its list id).
	MaxSends int

	// Retention is how long a send is kept. Zero means DefaultRetention.
	Retention time.Duration

	// Now is the clock. Nil means time.Now.
	Now func() time.Time
}

// Memory is a Sends kept in memory: the most recent MaxSends sends no
// older than Retention, fed by OnEvent. The zero Memory is not usable:
// make one with NewMemory. It is safe for concurrent use.
type Memory struct {
	opts MemoryOptions

	mu    sync.Mutex
	byID  map[string]Send
	order []string // ring of ids in arrival order
	next  int      // index in order of the oldest id once order is full
}

// NewMemory returns an empty Memory, or an error naming the field of opts
// that is out of range.
func NewMemory(opts MemoryOptions) (*Memory, error) {
	if opts.MaxSends < 0 {
		return nil, fmt.Errorf("events: NewMemory: MemoryOptions.MaxSends %d is negative", opts.MaxSends)
	}
	if opts.Retention < 0 {
		return nil, fmt.Errorf("events: NewMemory: MemoryOptions.Retention %v is negative", opts.Retention)
	}
	if opts.MaxSends == 0 {
		opts.MaxSends = DefaultMaxSends
	}
	if opts.Retention == 0 {
		opts.Retention = DefaultRetention
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Memory{opts: opts, byID: make(map[string]Send)}, nil
}

// OnEvent records e when it is a send event with a send id; it ignores
// every other event. It is meant as postroom.Options.OnEvent (or to be
// called from it), and is safe for concurrent use.
func (m *Memory) OnEvent(_ context.Context, e postroom.Event) {
	if e.Type != postroom.EventSend {
		return
	}
	id := sendid.Normalize(e.SendID)
	if id == "" {
		return
	}
	at := e.At
	if at.IsZero() {
		at = m.opts.Now()
	}
	m.record(Send{ID: id, AccountID: e.AccountID, Email: e.Email, List: e.List, At: at})
}

// record keeps s, forgetting the oldest send when full.
func (m *Memory) record(s Send) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.byID[s.ID]; ok {
		m.byID[s.ID] = s
		return
	}
	if len(m.order) < m.opts.MaxSends {
		m.order = append(m.order, s.ID)
	} else {
		delete(m.byID, m.order[m.next])
		m.order[m.next] = s.ID
		m.next = (m.next + 1) % len(m.order)
	}
	m.byID[s.ID] = s
}

// Send returns the send whose id is id (in either letter case), when it is
// kept and no older than Retention. It never fails.
func (m *Memory) Send(_ context.Context, id string) (Send, bool, error) {
	id = sendid.Normalize(id)
	m.mu.Lock()
	s, ok := m.byID[id]
	m.mu.Unlock()
	if !ok || m.opts.Now().Sub(s.At) > m.opts.Retention {
		return Send{}, false, nil
	}
	return s, true, nil
}
