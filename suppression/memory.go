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
	entries map[string][]Entry     // by address: one per scope and list
	soft    map[string][]time.Time // the soft bounces counted, by address
}

var _ List = (*Memory)(nil)

// NewMemory returns an empty list. It refuses a negative Policy field.
func NewMemory(opts Options) (*Memory, error) {
	if err := opts.check("suppression.NewMemory"); err != nil {
		return nil, err
	}
	return &Memory{opts: opts, accounts: map[string]*memAccount{}}, nil
}

// account is accountID's part, made when create is set; nil otherwise
// when it has none. The caller holds mu (for writing, with create).
func (m *Memory) account(accountID string, create bool) *memAccount {
	a := m.accounts[accountID]
	if a == nil && create {
		a = &memAccount{entries: map[string][]Entry{}, soft: map[string][]time.Time{}}
		m.accounts[accountID] = a
	}
	return a
}

// Suppressed returns the entries of accountID active at now among
// addresses, of every scope (postroom.Suppressions): a map read per
// address.
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
		es, ok := a.entries[addr]
		if !ok {
			if l := strings.ToLower(addr); l != addr {
				es = a.entries[l]
			}
		}
		for i := range es {
			if es[i].Active(now) {
				out = append(out, es[i].suppression())
			}
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
	a.put(e)
	return e, nil
}

// put keeps e, in place of the entry of its address, scope and list, if
// any. The caller holds mu for writing.
func (a *memAccount) put(e Entry) {
	es := a.entries[e.Address]
	if i := a.find(e.Address, e.Scope, e.List); i >= 0 {
		es[i] = e
		return
	}
	a.entries[e.Address] = append(es, e)
}

// find is the index of address's entry of scope and list in its entries,
// or -1. The caller holds mu.
func (a *memAccount) find(address string, scope postroom.Scope, list string) int {
	return slices.IndexFunc(a.entries[address], func(e Entry) bool { return e.sameKey(scope, list) })
}

// Delete removes an address's entries, or its entry of one scope (see
// List.Delete).
func (m *Memory) Delete(ctx context.Context, accountID, address string, scope postroom.Scope, list string) (bool, error) {
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
	scope, list, all, err := deleteKey(scope, list)
	if err != nil {
		return false, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	a := m.account(accountID, false)
	if a == nil {
		return false, nil
	}
	if all {
		_, had := a.entries[addr]
		delete(a.entries, addr)
		delete(a.soft, addr)
		return had, nil
	}
	if scope == postroom.ScopeAll {
		delete(a.soft, addr)
	}
	i := a.find(addr, scope, list)
	if i < 0 {
		return false, nil
	}
	if es := slices.Delete(a.entries[addr], i, i+1); len(es) > 0 {
		a.entries[addr] = es
	} else {
		delete(a.entries, addr)
	}
	return true, nil
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
		for addr, es := range a.entries {
			if addr < after.address || !strings.HasPrefix(addr, q.Prefix) {
				continue
			}
			for i := range es {
				e := &es[i]
				if keyOf(e).after(after) && (q.Reason == "" || e.Reason == q.Reason) &&
					(q.Scope == "" || e.Scope == q.Scope) && (q.List == "" || e.List == q.List) &&
					(q.IncludeExpired || e.Active(now)) {
					page = append(page, *e)
				}
			}
		}
	}
	m.mu.RUnlock()
	slices.SortFunc(page, func(x, y Entry) int { return compareKey(&x, &y) })
	if len(page) <= q.Limit {
		return page, "", nil
	}
	page = page[:q.Limit]
	return page, cursorAfter(&page[len(page)-1]), nil
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
	var old *Entry
	if i := a.find(o.Address, e.Scope, e.List); i >= 0 {
		old = &a.entries[o.Address][i]
	}
	if !replaces(old, &e, o.At) {
		return nil, nil
	}
	a.put(e)
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
		for addr, es := range a.entries {
			kept := slices.DeleteFunc(es, func(e Entry) bool { return !e.Expires.IsZero() && !e.Expires.After(before) })
			n += len(es) - len(kept)
			if len(kept) == 0 {
				delete(a.entries, addr)
			} else {
				a.entries[addr] = kept
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
