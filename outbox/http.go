package outbox

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/httpapi"
	"github.com/postroom/postroom/idempotency"
)

// HTTP returns o as the Async of an httpapi.Handler (httpapi.Options.Async),
// so that a message.send or message.send_template request with
// Prefer: respond-async is enqueued and answered 202 Accepted with the
// call's id, and GET httpapi.CallsPath + id answers its progress:
//
//	h, err := httpapi.New(m, httpapi.Options{Async: ob.HTTP()})
//
// Each request's call is enqueued in a transaction of its own on o's pool.
// The request's Idempotency-Key header is EnqueueOptions.IdempotencyKey:
// a retry with the same key and call gets the first call's id, never a
// second call; with another call, an error wrapping
// idempotency.ErrConflict (409). A key that idempotency.Key.Check refuses
// is refused the same way as on a synchronous call (400).
func (o *Outbox) HTTP() httpapi.Async { return httpAsync{o} }

// httpAsync is Outbox as httpapi.Async.
type httpAsync struct{ o *Outbox }

func (a httpAsync) Enqueue(ctx context.Context, op postroom.Operation, call *postroom.Call, key string) (string, error) {
	if key != "" {
		if err := (idempotency.Key{AccountID: call.AccountID, Key: key}).Check(); err != nil {
			return "", err
		}
	}
	var id string
	err := pgx.BeginFunc(ctx, a.o.pool, func(tx pgx.Tx) error {
		var err error
		id, err = a.o.Enqueue(ctx, tx, op, call, EnqueueOptions{IdempotencyKey: key})
		return err
	})
	if errors.Is(err, ErrConflict) {
		return "", fmt.Errorf("%w: %w", idempotency.ErrConflict, err)
	}
	return id, err
}

func (a httpAsync) Status(ctx context.Context, callID string) (*httpapi.CallStatus, error) {
	st, err := a.o.Status(ctx, callID)
	if errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("%w: %w", httpapi.ErrCallNotFound, err)
	}
	if err != nil {
		return nil, err
	}
	out := &httpapi.CallStatus{ID: st.CallID, Counts: st.Counts, Results: st.Results}
	total := 0
	for _, n := range st.Counts {
		total += n
	}
	switch {
	case st.Done:
		out.State = httpapi.CallDone
	case st.Counts[postroom.StatusQueued] == total:
		out.State = httpapi.CallQueued
	default:
		out.State = httpapi.CallRunning
	}
	return out, nil
}
