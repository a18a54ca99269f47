package transport

import (
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/postroom/postroom/delivery"
)

// Memory is a delivery.Transport that records every envelope it accepts, in
// the order Send was called, for tests and previews. It delivers nothing.
//
// Send records a deep copy of the Envelope (To and Data included), so the
// caller may reuse its memory at once; Envelopes and Envelope return copies
// again, so the caller may modify what they return. Memory keeps everything
// until Reset: it is not meant for unbounded volumes.
//
// A Memory is safe for concurrent use. The zero value is an empty Memory
// ready to use; NewMemory returns one too. Fail must be set before the first
// Send and not changed afterwards. A Memory must not be copied after first
// use.
type Memory struct {
	// Fail, when not nil, is called by Send for every envelope before it is
	// recorded, to script delivery failures in tests. Its result is what
	// Send returns:
	//
	//   - nil: the envelope is recorded;
	//   - a *delivery.PartialError: the envelope is recorded, with the
	//     refused addresses removed from its To;
	//   - any other error (such as a *delivery.DeliveryError): nothing is
	//     recorded.
	//
	// Fail is called from the goroutines that call Send, concurrently, and
	// must not modify or keep the Envelope.
	Fail func(env *delivery.Envelope) error

	mu   sync.Mutex
	envs []delivery.Envelope
}

// NewMemory returns an empty Memory.
func NewMemory() *Memory {
	return &Memory{}
}

// Send records a copy of env. If ctx is already done it returns ctx.Err()
// and records nothing; otherwise it returns what Fail returns (see Fail),
// or nil.
func (m *Memory) Send(ctx context.Context, env *delivery.Envelope) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	var failErr error
	if m.Fail != nil {
		failErr = m.Fail(env)
	}
	rec := deepCopyEnvelope(env)
	if failErr != nil {
		var partial *delivery.PartialError
		if !errors.As(failErr, &partial) {
			return failErr
		}
		rec.To = slices.DeleteFunc(rec.To, func(addr string) bool {
			return slices.ContainsFunc(partial.Refused, func(r delivery.RefusedRecipient) bool {
				return r.Address == addr
			})
		})
	}
	m.mu.Lock()
	m.envs = append(m.envs, rec)
	m.mu.Unlock()
	return failErr
}

// Envelopes returns copies of the recorded envelopes, in the order they
// were recorded.
func (m *Memory) Envelopes() []delivery.Envelope {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]delivery.Envelope, len(m.envs))
	for i := range m.envs {
		out[i] = deepCopyEnvelope(&m.envs[i])
	}
	return out
}

// Envelope returns a copy of the recorded envelope whose SendID is sendID,
// the latest one if several were recorded, and whether there was one.
func (m *Memory) Envelope(sendID string) (delivery.Envelope, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := len(m.envs) - 1; i >= 0; i-- {
		if m.envs[i].SendID == sendID {
			return deepCopyEnvelope(&m.envs[i]), true
		}
	}
	return delivery.Envelope{}, false
}

// Len returns the number of recorded envelopes.
func (m *Memory) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.envs)
}

// Reset forgets every recorded envelope.
func (m *Memory) Reset() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.envs = nil
}

// deepCopyEnvelope returns a copy of env sharing no memory with it.
func deepCopyEnvelope(env *delivery.Envelope) delivery.Envelope {
	return delivery.Envelope{
		SendID: env.SendID,
		From:   env.From,
		To:     slices.Clone(env.To),
		Data:   slices.Clone(env.Data),
	}
}
