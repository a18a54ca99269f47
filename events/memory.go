package events

import (
	"github.com/postroom/postroom/option"

	"cmp"
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/sendid"
)

// Defaults of MemoryOptions and SQLOptions.
const (
	// DefaultMaxSends is how many messages a Memory keeps.
	DefaultMaxSends = 100_000
	// DefaultRetention is how long a send is kept for its bounces: a
	// bounce that arrives later is dropped as unknown. Mail servers give
	// up on a message after 5 days by default (Postfix's
	// maximal_queue_lifetime), so its bounce arrives within about that.
	DefaultRetention = 7 * 24 * time.Hour
)

// MemoryOptions configure a Memory.
type MemoryOptions struct {
	// MaxSends is how many messages are kept (sent, deferred or
	// rejected); when full, the oldest is forgotten. Zero means
	// DefaultMaxSends. Each takes about 400 bytes with a send event, and
	// about 200 more per later event.
	MaxSends int

	// Retention is how long a send is kept. Zero means DefaultRetention.
	Retention time.Duration

	// KeepBodies is how long the rendered message of each send handed to
	// KeepBody (see KeepBodies) is kept. Zero, the default, keeps none.
	KeepBodies time.Duration

	// MaxBodies is how many message bodies are kept when KeepBodies is
	// set; when full, the oldest is forgotten. Zero means
	// DefaultMaxBodies. Each takes the size of its message.
	MaxBodies int

	// Now is the clock. Nil means time.Now.
	Now func() time.Time
}

// DefaultMaxBodies is how many message bodies a Memory keeps when
// MemoryOptions.KeepBodies is set and MaxBodies is zero.
const DefaultMaxBodies = 1000

// Memory is a Sends and an Activity kept in memory: the most recent
// MaxSends messages no older than Retention, each with its timeline, fed
// by OnEvent. The zero Memory is not usable: make one with NewMemory. It
// is safe for concurrent use.
type Memory struct {
	opts MemoryOptions

	mu    sync.Mutex
	byID  map[string]*message // by send id, or "#seq" for a reject
	order []string            // ring of keys in arrival order
	next  int                 // index in order of the oldest key once order is full
	seq   int64               // the last message's sequence number

	bodies    map[string]keptBody // by send id (KeepBodies)
	bodyOrder []string            // ring of the bodies' send ids in arrival order
	bodyNext  int                 // index in bodyOrder of the oldest once full
}

// maxTimeline bounds the events a Memory keeps of one message: past it,
// the oldest after the first are forgotten.
const maxTimeline = 64

// message is a Memory's record of one message.
type message struct {
	seq   int64
	send  Send // ID set when a send event was recorded
	msg   Message
	tried bool // a queued message whose call has tried it
}

// NewMemory returns an empty Memory, or an error naming the field of opts
// that is out of range.
func NewMemory(opts MemoryOptions) (*Memory, error) {
	const op = "events.NewMemory"
	if err := option.Default(op, "MemoryOptions.MaxSends", &opts.MaxSends, DefaultMaxSends); err != nil {
		return nil, err
	}
	if err := option.Default(op, "MemoryOptions.Retention", &opts.Retention, DefaultRetention); err != nil {
		return nil, err
	}
	if err := option.Default(op, "MemoryOptions.KeepBodies", &opts.KeepBodies, 0); err != nil {
		return nil, err
	}
	if err := option.Default(op, "MemoryOptions.MaxBodies", &opts.MaxBodies, DefaultMaxBodies); err != nil {
		return nil, err
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Memory{opts: opts, byID: make(map[string]*message)}, nil
}

// OnEvent records e in its message's timeline. A send, a deferral or a
// reject of a message not kept starts its record (a reject, which has no
// send id, is a message of its own), as does a queued event (a message
// of its own until its call tries it: see Message); any other event of a
// message not kept is ignored. It is meant as postroom.Options.OnEvent
// (or to be called from it), and is safe for concurrent use.
func (m *Memory) OnEvent(_ context.Context, e postroom.Event) {
	e.SendID = sendid.Normalize(e.SendID)
	queued := e.Type == postroom.EventQueued
	switch {
	case queued && e.CallID == "",
		!queued && e.SendID == "" && e.Type != postroom.EventReject:
		return
	}
	if e.At.IsZero() {
		e.At = m.opts.Now()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if queued {
		key := queuedKey(e)
		if m.byID[key] != nil {
			return
		}
		m.seq++
		m.add(key, &message{seq: m.seq, msg: Message{AccountID: e.AccountID, Email: e.Email, List: e.List, State: StateQueued, Created: e.At, Timeline: []postroom.Event{e}}})
		return
	}
	key := e.SendID
	r := m.byID[key]
	if key == "" || r == nil {
		if !opens(e.Type) {
			return
		}
		m.seq++
		if key == "" {
			key = "#" + strconv.FormatInt(m.seq, 10)
		}
		r = &message{seq: m.seq, msg: Message{SendID: e.SendID, AccountID: e.AccountID, Email: e.Email, List: e.List, Created: e.At}}
		if e.CallID != "" {
			if q := m.byID[queuedKey(e)]; q != nil {
				// The call tries it: the queued event heads this attempt's
				// timeline and is no message of its own any longer.
				q.tried = true
				r.msg.Timeline = append(r.msg.Timeline, q.msg.Timeline[0])
			}
		}
		m.add(key, r)
	}
	if len(r.msg.Timeline) == maxTimeline {
		r.msg.Timeline = append(r.msg.Timeline[:1], r.msg.Timeline[2:]...)
	}
	r.msg.Timeline = append(r.msg.Timeline, e)
	r.msg.State = stateOf(e.Type)
	if e.Type == postroom.EventSend {
		r.send = Send{ID: e.SendID, AccountID: e.AccountID, Email: e.Email, List: e.List, At: e.At}
	}
}

// queuedKey is the key of the queued message that e is about: its
// account, call and address (in any case).
func queuedKey(e postroom.Event) string {
	return "q\x00" + e.AccountID + "\x00" + e.CallID + "\x00" + strings.ToLower(e.Email)
}

// add keeps r under key, forgetting the oldest message when full.
func (m *Memory) add(key string, r *message) {
	if len(m.order) < m.opts.MaxSends {
		m.order = append(m.order, key)
	} else {
		delete(m.byID, m.order[m.next])
		m.order[m.next] = key
		m.next = (m.next + 1) % len(m.order)
	}
	m.byID[key] = r
}

// Lookup returns the send whose id is id (in either letter case), when it is
// kept and no older than Retention. It never fails.
func (m *Memory) Lookup(_ context.Context, id string) (Send, bool, error) {
	id = sendid.Normalize(id)
	if id == "" {
		return Send{}, false, nil
	}
	m.mu.Lock()
	var s Send
	if r := m.byID[id]; r != nil {
		s = r.send
	}
	m.mu.Unlock()
	if s.ID == "" || m.opts.Now().Sub(s.At) > m.opts.Retention {
		return Send{}, false, nil
	}
	return s, true, nil
}

// Search returns the kept messages that q selects, newest first; see
// Activity. Messages created longer than Retention ago are not shown.
func (m *Memory) Search(_ context.Context, q Query) ([]Message, string, error) {
	q, err := q.check()
	if err != nil {
		return nil, "", err
	}
	cur, paged, err := parseSearchCursor(q.Cursor)
	if err != nil {
		return nil, "", err
	}
	oldest := m.opts.Now().Add(-m.opts.Retention)
	id := sendid.Normalize(q.SendID)
	m.mu.Lock()
	var found []*message
	for _, r := range m.byID {
		g := &r.msg
		switch {
		case g.AccountID != q.AccountID || g.Created.Before(oldest) || r.tried,
			q.SendID != "" && (id == "" || g.SendID != id),
			q.CallID != "" && callOf(g) != q.CallID,
			q.Email != "" && !strings.EqualFold(g.Email, q.Email),
			q.List != "" && !strings.EqualFold(g.List, q.List),
			q.State != "" && g.State != q.State,
			!q.From.IsZero() && g.Created.Before(q.From),
			!q.To.IsZero() && !g.Created.Before(q.To),
			paged && !before(g.Created, r.seq, cur):
			continue
		}
		found = append(found, r)
	}
	slices.SortFunc(found, func(a, b *message) int {
		if c := b.msg.Created.Compare(a.msg.Created); c != 0 {
			return c
		}
		return cmp.Compare(b.seq, a.seq)
	})
	next := ""
	if len(found) > q.Limit {
		found = found[:q.Limit]
		last := found[q.Limit-1]
		next = searchCursor{at: last.msg.Created, n: last.seq}.String()
	}
	out := make([]Message, len(found))
	for i, r := range found {
		out[i] = r.msg
		out[i].Timeline = slices.Clone(r.msg.Timeline)
		out[i].describe()
	}
	m.mu.Unlock()
	return out, next, nil
}

// callOf is the call id of g: that of its first event that has one.
func callOf(g *Message) string {
	for i := range g.Timeline {
		if id := g.Timeline[i].CallID; id != "" {
			return id
		}
	}
	return ""
}

// before reports whether (at, n) comes after the cursor c in newest-first
// order.
func before(at time.Time, n int64, c searchCursor) bool {
	if !at.Equal(c.at) {
		return at.Before(c.at)
	}
	return n < c.n
}

// Info returns the kept message of accountID whose send id is sendID; see
// Activity. It never fails.
func (m *Memory) Info(_ context.Context, accountID, sendID string) (Message, bool, error) {
	id := sendid.Normalize(sendID)
	if id == "" {
		return Message{}, false, nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.byID[id]
	if r == nil || r.msg.AccountID != accountID || m.opts.Now().Sub(r.msg.Created) > m.opts.Retention {
		return Message{}, false, nil
	}
	g := r.msg
	g.Timeline = slices.Clone(g.Timeline)
	g.describe()
	return g, true, nil
}
