package suppression

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/postroom/postroom"
)

// Memory is a List in memory, for tests and single-process applications:
// its entries are lost when the process ends. It is safe for concurrent
// use; a lookup takes a read lock, so lookups run in parallel. Build it
// with NewMemory.
type Memory struct {
	opts Options
	mu   sync.RWMutex
	// accounts holds each account's entries and soft bounces.
	accounts map[string]*memAccount
}

// memAccount is one account's part of a Memory.
type memAccount struct {
	entries map[string]*Entry      // by address
	soft    map[string][]time.Time // the soft bounces counted, by address
}

var _ List = (*Memory)(nil)

// NewMemory returns an empty list. It refuses a negative Policy field.
func NewMemory(opts Options) (*Memory, error) {
	if err := opts.check(); err != nil {
		return nil, err
	}
	return &Memory{opts: opts, accounts: map[string]*memAccount{}}, nil
}

// account is accountID's part, made when create is set; nil otherwise
// when it has none. The caller holds mu (for writing, with create).
func (m *Memory) account(accountID string, create bool) *memAccount {
	a := m.accounts[accountID]
	if a == nil && create {
		a = &memAccount{entries: map[string]*Entry{}, soft: map[string][]time.Time{}}
		m.accounts[accountID] = a
	}
	return a
}

// Suppressed returns the entries of accountID active at now among
// addresses (postroom.Suppressions).
func (m *Memory) Suppressed(ctx context.Context, accountID string, addresses []string, now time.Time) ([]postroom.Suppression, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	a := m.account(accountID, false)
	if a == nil || len(a.entries) == 0 {
		return nil, nil
	}
	var out []postroom.Suppression
	for _, addr := range addresses {
		e := a.entries[addr]
		if e == nil {
			if l := strings.ToLower(addr); l != addr {
				e = a.entries[l]
			}
		}
		if e != nil && e.Active(now) {
			out = append(out, e.suppression())
		}
	}
	return out, nil
}

// Add lists e (see List.Add).
func (m *Memory) Add(ctx context.Context, e Entry) (Entry, error) {
	if err := ctx.Err(); err != nil {
		return Entry{}, err
	}
	e, err := checkEntry(e, m.opts.Now())
	if err != nil {
		return Entry{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	a := m.account(e.AccountID, true)
	kept := e
	a.entries[e.Address] = &kept
	return e, nil
}

// Delete removes an address's entry (see List.Delete).
func (m *Memory) Delete(ctx context.Context, accountID, address string) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	if err := checkAccount(accountID); err != nil {
		return false, err
	}
	addr, err := normalAddress(address)
	if err != nil {
		return false, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	a := m.account(accountID, false)
	if a == nil {
		return false, nil
	}
	_, had := a.entries[addr]
	delete(a.entries, addr)
	delete(a.soft, addr)
	return had, nil
}

// List returns a page of entries (see List.List).
func (m *Memory) List(ctx context.Context, q Query) ([]Entry, string, error) {
	if err := ctx.Err(); err != nil {
		return nil, "", err
	}
	q, after, err := checkQuery(q)
	if err != nil {
		return nil, "", err
	}
	now := m.opts.Now()
	m.mu.RLock()
	var page []Entry
	if a := m.account(q.AccountID, false); a != nil {
		for addr, e := range a.entries {
			if addr > after && strings.HasPrefix(addr, q.Prefix) && (q.Reason == "" || e.Reason == q.Reason) && (q.IncludeExpired || e.Active(now)) {
				page = append(page, *e)
			}
		}
	}
	m.mu.RUnlock()
	slices.SortFunc(page, func(x, y Entry) int { return strings.Compare(x.Address, y.Address) })
	if len(page) <= q.Limit {
		return page, "", nil
	}
	page = page[:q.Limit]
	return page, cursorAfter(page[len(page)-1].Address), nil
}

// Observe applies the Policy to o (see List.Observe).
func (m *Memory) Observe(ctx context.Context, o Observation) (*Entry, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	o, err := checkObservation(o, m.opts.Now())
	if err != nil {
		return nil, err
	}
	p := &m.opts.Policy
	m.mu.Lock()
	defer m.mu.Unlock()
	a := m.account(o.AccountID, true)
	if o.Kind == SoftBounce {
		// The soft bounces within the window, this one included: at
		// most the count, the latest kept.
		from := o.At.Add(-p.SoftWindow)
		kept := slices.DeleteFunc(append(a.soft[o.Address], o.At), func(t time.Time) bool { return !t.After(from) })
		slices.SortFunc(kept, time.Time.Compare)
		if len(kept) > p.SoftBounces {
			kept = slices.Delete(kept, 0, len(kept)-p.SoftBounces)
		}
		if len(kept) < p.SoftBounces {
			a.soft[o.Address] = kept
			return nil, nil
		}
		delete(a.soft, o.Address) // counted from zero again
	}
	e := p.entry(&o)
	if !replaces(a.entries[o.Address], &e, o.At) {
		return nil, nil
	}
	kept := e
	a.entries[o.Address] = &kept
	return &e, nil
}

// Prune deletes the entries that expired at or before before, and the
// soft bounces that can no longer count towards a listing at before
// (older than Policy.SoftWindow), and returns how many entries it
// deleted. Entries that never expire stay. Call it now and then (daily)
// to keep the list from growing with what no longer matters.
func (m *Memory) Prune(ctx context.Context, before time.Time) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	from := before.Add(-m.opts.Policy.SoftWindow)
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, a := range m.accounts {
		for addr, e := range a.entries {
			if !e.Expires.IsZero() && !e.Expires.After(before) {
				delete(a.entries, addr)
				n++
			}
		}
		for addr, bounces := range a.soft {
			if !slices.ContainsFunc(bounces, func(t time.Time) bool { return t.After(from) }) {
				delete(a.soft, addr)
			}
		}
	}
	return n, nil
}
