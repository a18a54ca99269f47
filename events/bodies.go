package events

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/postroom/postroom/delivery"
	"github.com/postroom/postroom/internal/sendid"
	"github.com/postroom/postroom/sqldb"
)

// BodyKeeper keeps the rendered message of a send, by its send id: SQL
// and Memory are, when their KeepBodies option is set; otherwise KeepBody
// keeps nothing.
//
// KeepBody must not keep data after it returns: the caller reuses its
// memory.
type BodyKeeper interface {
	KeepBody(ctx context.Context, sendID string, data []byte) error
}

// KeepBodiesOptions configure the Transport of KeepBodies.
type KeepBodiesOptions struct {
	// OnError, when not nil, is called with the send id of a message that
	// was delivered but whose body could not be kept, and why. The send
	// itself succeeds all the same: the message left, and failing it would
	// have it sent again. Nil ignores such errors.
	OnError func(ctx context.Context, sendID string, err error)
}

// KeepBodies returns a Transport that sends each message with next and,
// once next accepted it (a nil error or a *delivery.PartialError), hands
// its complete rendered message (Envelope.Data) to k under its send id.
// It is the Transport to give the Mailer (postroom.New) when the store's
// KeepBodies option is set; when it is not, KeepBody does nothing and the
// wrapper costs nothing more than a call.
//
// The body is written synchronously, one write per message, before Send
// returns, so no goroutine outlives the call and nothing is lost at a
// stop: on SQL that is one INSERT round trip per message (batched
// writes would hold tens of KB per message in memory until a flush). That
// round trip, with the bytes it writes, is the cost of the option; see
// the package documentation for its size.
//
// When next is a delivery.Queuer, so is the Transport returned.
func KeepBodies(next delivery.Transport, k BodyKeeper, opts KeepBodiesOptions) delivery.Transport {
	t := &bodyTransport{next: next, k: k, opts: opts}
	if q, ok := next.(delivery.Queuer); ok {
		return &queuingBodyTransport{bodyTransport: t, q: q}
	}
	return t
}

// bodyTransport is the Transport of KeepBodies.
type bodyTransport struct {
	next delivery.Transport
	k    BodyKeeper
	opts KeepBodiesOptions
}

// Send sends env with the next transport and keeps its body once
// accepted.
func (t *bodyTransport) Send(ctx context.Context, env *delivery.Envelope) error {
	err := t.next.Send(ctx, env)
	var partial *delivery.PartialError
	if err != nil && !errors.As(err, &partial) {
		return err
	}
	if kerr := t.k.KeepBody(ctx, env.SendID, env.Data); kerr != nil && t.opts.OnError != nil {
		t.opts.OnError(ctx, env.SendID, kerr)
	}
	return err
}

// queuingBodyTransport is KeepBodies' Transport of a delivery.Queuer.
type queuingBodyTransport struct {
	*bodyTransport
	q delivery.Queuer
}

// Queued reports what the next transport's Queued does.
func (t *queuingBodyTransport) Queued() bool { return t.q.Queued() }

// KeepBody keeps data as the rendered message of sendID when
// SQLOptions.KeepBodies is set (it does nothing otherwise): one INSERT,
// which replaces the body kept before for that send id. It does not keep
// data.
func (s *SQL) KeepBody(ctx context.Context, sendID string, data []byte) error {
	id := sendid.Normalize(sendID)
	if s.opts.KeepBodies == 0 || id == "" {
		return nil
	}
	if _, err := s.db.Exec(ctx, `
		INSERT INTO postroom_event_bodies (send_id, at, data) VALUES ($1, $2, $3)
		ON CONFLICT (send_id) DO UPDATE SET at = excluded.at, data = excluded.data`, id, s.opts.Now(), data); err != nil {
		return fmt.Errorf("events: keep body of %s: %w", id, err)
	}
	return nil
}

// Body returns the rendered message kept of sendID (see KeepBodies), if
// it is no older than SQLOptions.KeepBodies and the message is accountID's:
// its events must name that account, so a body reads only once the
// Recorder has written the message's send event. It reports false when
// there is none, or KeepBodies is off.
func (s *SQL) Body(ctx context.Context, accountID, sendID string) ([]byte, bool, error) {
	id := sendid.Normalize(sendID)
	if s.opts.KeepBodies == 0 || id == "" {
		return nil, false, nil
	}
	var data []byte
	err := s.db.QueryRow(ctx, `
		SELECT b.data FROM postroom_event_bodies b
		WHERE b.send_id = $1 AND b.at >= $3
		AND EXISTS (SELECT 1 FROM postroom_events e WHERE e.send_id = $1 AND e.account_id = $2)`,
		id, accountID, s.opts.Now().Add(-s.opts.KeepBodies)).Scan(&data)
	if errors.Is(err, sqldb.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("events: body of %s: %w", id, err)
	}
	return data, true, nil
}

// rotateBodies deletes the bodies older than KeepBodies before now (all
// of them when KeepBodies is off), in batches of rotateBatch, each its
// own statement.
func (s *SQL) rotateBodies(ctx context.Context, now time.Time) error {
	cutoff := now.Add(-s.opts.KeepBodies)
	for {
		n, err := s.db.Exec(ctx, `DELETE FROM postroom_event_bodies WHERE send_id IN (
			SELECT send_id FROM postroom_event_bodies WHERE at < $1 ORDER BY at LIMIT $2)`, cutoff, rotateBatch)
		if err != nil {
			return fmt.Errorf("events: rotate bodies: %w", err)
		}
		if n < rotateBatch {
			return nil
		}
	}
}

// keptBody is a Memory's kept message body.
type keptBody struct {
	at   time.Time
	data []byte
}

// KeepBody keeps a copy of data as the rendered message of sendID when
// MemoryOptions.KeepBodies is set (it does nothing otherwise); past
// MemoryOptions.MaxBodies, the oldest body is forgotten.
func (m *Memory) KeepBody(_ context.Context, sendID string, data []byte) error {
	id := sendid.Normalize(sendID)
	if m.opts.KeepBodies == 0 || id == "" {
		return nil
	}
	b := keptBody{at: m.opts.Now(), data: append([]byte(nil), data...)}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.bodies == nil {
		m.bodies = make(map[string]keptBody)
	}
	if _, ok := m.bodies[id]; !ok {
		if len(m.bodyOrder) < m.opts.MaxBodies {
			m.bodyOrder = append(m.bodyOrder, id)
		} else {
			delete(m.bodies, m.bodyOrder[m.bodyNext])
			m.bodyOrder[m.bodyNext] = id
			m.bodyNext = (m.bodyNext + 1) % len(m.bodyOrder)
		}
	}
	m.bodies[id] = b
	return nil
}

// Body returns the rendered message kept of sendID, if it is no older
// than MemoryOptions.KeepBodies and the message is accountID's (a send
// of that account is kept). It reports false when there is none, or
// KeepBodies is off. The caller may modify what it returns.
func (m *Memory) Body(_ context.Context, accountID, sendID string) ([]byte, bool, error) {
	id := sendid.Normalize(sendID)
	if m.opts.KeepBodies == 0 || id == "" {
		return nil, false, nil
	}
	cutoff := m.opts.Now().Add(-m.opts.KeepBodies)
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.bodies[id]
	r := m.byID[id]
	if !ok || r == nil || r.msg.AccountID != accountID || b.at.Before(cutoff) {
		return nil, false, nil
	}
	return append([]byte(nil), b.data...), true, nil
}
