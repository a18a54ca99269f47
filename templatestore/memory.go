package templatestore

import (
	"context"
	"sync"
)

// Memory is a TemplateStore that keeps template sources in memory, keyed by
// account id and template id.
//
// A Memory is safe for concurrent use: Put and Delete may run while a Mailer
// looks templates up, and a call sees each template either before or after
// a change, never half of one. The zero value is an empty store ready to
// use; NewMemory returns one too. A Memory must not be copied after first
// use.
type Memory struct {
	mu        sync.RWMutex
	templates map[memoryKey]string
}

// memoryKey scopes a template id by its account.
type memoryKey struct {
	account, id string
}

// NewMemory returns an empty Memory.
func NewMemory() *Memory {
	return &Memory{}
}

// Put stores source as template id of account accountID, replacing any
// template stored under the same ids. It returns an error wrapping
// ErrInvalidID, and stores nothing, if either id is invalid.
func (m *Memory) Put(accountID, id, source string) error {
	if err := checkIDs(accountID, id); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.templates == nil {
		m.templates = make(map[memoryKey]string)
	}
	m.templates[memoryKey{accountID, id}] = source
	return nil
}

// Delete removes template id of account accountID. Deleting a template that
// is not stored does nothing.
func (m *Memory) Delete(accountID, id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.templates, memoryKey{accountID, id})
}

// Template returns the source of template id of account accountID. A
// template that is not stored, or an invalid id, gives an error wrapping
// postroom.ErrTemplateNotFound; a done ctx gives ctx.Err().
func (m *Memory) Template(ctx context.Context, accountID, id string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if err := checkIDs(accountID, id); err != nil {
		return "", err
	}
	m.mu.RLock()
	source, ok := m.templates[memoryKey{accountID, id}]
	m.mu.RUnlock()
	if !ok {
		return "", notFound(accountID, id)
	}
	return source, nil
}
