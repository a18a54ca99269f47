package templatestore

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"time"
)

// Memory is a Manager that keeps templates in memory, keyed by account id
// and template id.
//
// A Memory is safe for concurrent use: its methods may run while a Mailer
// looks templates up, and a call sees each template either before or after
// a change, never half of one. The zero value is an empty store ready to
// use, keeping DefaultKeepVersions versions of each template; NewMemory
// returns one too. A Memory must not be copied after first use.
type Memory struct {
	// KeepVersions is how many published versions of each template are
	// kept, the live one included; zero (or negative) means
	// DefaultKeepVersions. It must not change once the Memory is in use.
	KeepVersions int

	mu        sync.RWMutex
	templates map[memoryKey]*memoryTemplate
}

// memoryKey scopes a template id by its account.
type memoryKey struct {
	account, id string
}

// memoryTemplate is a stored template; versions are oldest first.
type memoryTemplate struct {
	draft            string
	created, updated time.Time
	versions         []Version
}

// NewMemory returns an empty Memory.
func NewMemory() *Memory {
	return &Memory{}
}

// Put stores source as template id of account accountID, as its draft and
// its live version, replacing any template stored under the same ids (the
// live version before it stays among the kept versions). It returns an
// error wrapping ErrInvalidID, and stores nothing, if either id is
// invalid. Unlike Add and Update, it takes any source, the empty one too,
// as it always has.
func (m *Memory) Put(accountID, id, source string) error {
	if err := checkIDs(accountID, id); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.templates[memoryKey{accountID, id}]
	if t == nil {
		t = m.create(accountID, id)
	}
	t.draft, t.updated = source, time.Now()
	m.publish(t, source, 0)
	return nil
}

// Delete removes template id of account accountID. Deleting a template that
// is not stored does nothing; Remove reports it.
func (m *Memory) Delete(accountID, id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.templates, memoryKey{accountID, id})
}

// Template returns the live source of template id of account accountID. A
// template that is not stored or never published, or an invalid id, gives
// an error wrapping postroom.ErrTemplateNotFound; a done ctx gives
// ctx.Err().
func (m *Memory) Template(ctx context.Context, accountID, id string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if err := checkIDs(accountID, id); err != nil {
		return "", err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	t := m.templates[memoryKey{accountID, id}]
	if t == nil || len(t.versions) == 0 {
		return "", notFound(accountID, id)
	}
	return t.versions[len(t.versions)-1].Source, nil
}

// Add is Manager.Add.
func (m *Memory) Add(ctx context.Context, accountID, id, source string, publish bool) (*Template, error) {
	if err := checkChange(ctx, accountID, id, source); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.templates[memoryKey{accountID, id}] != nil {
		return nil, exists(accountID, id)
	}
	t := m.create(accountID, id)
	t.draft = source
	if publish {
		m.publish(t, source, 0)
	}
	return t.view(accountID, id, false), nil
}

// Update is Manager.Update.
func (m *Memory) Update(ctx context.Context, accountID, id, source string, publish bool) (*Template, error) {
	if err := checkChange(ctx, accountID, id, source); err != nil {
		return nil, err
	}
	return m.change(accountID, id, func(t *memoryTemplate) error {
		t.draft, t.updated = source, time.Now()
		if publish {
			m.publish(t, source, 0)
		}
		return nil
	})
}

// Publish is Manager.Publish.
func (m *Memory) Publish(ctx context.Context, accountID, id string) (*Template, error) {
	if err := checkLookup(ctx, accountID, id); err != nil {
		return nil, err
	}
	return m.change(accountID, id, func(t *memoryTemplate) error {
		m.publish(t, t.draft, 0)
		return nil
	})
}

// PublishVersion is Manager.PublishVersion.
func (m *Memory) PublishVersion(ctx context.Context, accountID, id string, version int) (*Template, error) {
	if err := checkLookup(ctx, accountID, id); err != nil {
		return nil, err
	}
	return m.change(accountID, id, func(t *memoryTemplate) error {
		i := slices.IndexFunc(t.versions, func(v Version) bool { return v.Version == version })
		if i < 0 {
			return versionNotFound(accountID, id, version)
		}
		m.publish(t, t.versions[i].Source, version)
		return nil
	})
}

// Remove is Manager.Remove.
func (m *Memory) Remove(ctx context.Context, accountID, id string) (*Template, error) {
	if err := checkLookup(ctx, accountID, id); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	k := memoryKey{accountID, id}
	t := m.templates[k]
	if t == nil {
		return nil, notFound(accountID, id)
	}
	delete(m.templates, k)
	return t.view(accountID, id, true), nil
}

// Info is Manager.Info.
func (m *Memory) Info(ctx context.Context, accountID, id string) (*Template, error) {
	if err := checkLookup(ctx, accountID, id); err != nil {
		return nil, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	t := m.templates[memoryKey{accountID, id}]
	if t == nil {
		return nil, notFound(accountID, id)
	}
	return t.view(accountID, id, true), nil
}

// List is Manager.List.
func (m *Memory) List(ctx context.Context, accountID string) ([]Template, error) {
	if err := checkList(ctx, accountID); err != nil {
		return nil, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	var out []Template
	for k, t := range m.templates {
		if k.account == accountID {
			out = append(out, *t.view(k.account, k.id, false))
		}
	}
	slices.SortFunc(out, func(a, b Template) int { return cmp.Compare(a.ID, b.ID) })
	return out, nil
}

// create adds an empty template; m.mu is held.
func (m *Memory) create(accountID, id string) *memoryTemplate {
	if m.templates == nil {
		m.templates = make(map[memoryKey]*memoryTemplate)
	}
	now := time.Now()
	t := &memoryTemplate{created: now, updated: now}
	m.templates[memoryKey{accountID, id}] = t
	return t
}

// change runs f on a stored template under the lock and returns the
// template after it.
func (m *Memory) change(accountID, id string, f func(t *memoryTemplate) error) (*Template, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.templates[memoryKey{accountID, id}]
	if t == nil {
		return nil, notFound(accountID, id)
	}
	if err := f(t); err != nil {
		return nil, err
	}
	return t.view(accountID, id, false), nil
}

// publish makes source live as a new version, published again from
// version from (0: the draft), unless it is live already, and forgets the
// versions past KeepVersions; m.mu is held.
func (m *Memory) publish(t *memoryTemplate, source string, from int) {
	n := len(t.versions)
	if n > 0 && t.versions[n-1].Source == source {
		return
	}
	number := 1
	if n > 0 {
		number = t.versions[n-1].Version + 1
	}
	t.versions = append(t.versions, Version{Version: number, Source: source, Published: time.Now(), From: from})
	if keep := keepVersions(m.KeepVersions); len(t.versions) > keep {
		t.versions = slices.Delete(t.versions, 0, len(t.versions)-keep)
	}
}

// view returns t as a Template, with its versions when all is set.
func (t *memoryTemplate) view(accountID, id string, all bool) *Template {
	v := &Template{AccountID: accountID, ID: id, Draft: t.draft, Created: t.created, Updated: t.updated}
	if n := len(t.versions); n > 0 {
		live := t.versions[n-1]
		v.Published = &live
	}
	if all {
		v.Versions = slices.Clone(t.versions)
		slices.Reverse(v.Versions)
	}
	return v
}
