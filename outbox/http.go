package outbox

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/idempotency"
)

// HTTP is an Outbox as the Async of an httpapi.Handler
// (httpapi.Options.Async), so that a message.send or message.send_template
// request with Prefer: respond-async is enqueued and answered 202 Accepted
// with the call's id, and GET /api/1.0/calls/{id} answers its Status:
//
//	h, err := httpapi.New(m, httpapi.Options{Async: ob.HTTP()})
//
// httpapi.Async names only the root package's types, so this package
// does not import httpapi: a worker binary links no HTTP handler. HTTP
// differs from the Outbox in one method: its Enqueue runs the Outbox's in
// a transaction of its own on the Outbox's pool, since a request has no
// transaction of the application's to join.
type HTTP struct{ o *Outbox }

// HTTP returns o as an httpapi.Async.
func (o *Outbox) HTTP() HTTP { return HTTP{o} }

// Enqueue enqueues call as op in a transaction of its own and returns its
// id. The request's Idempotency-Key header, key, is
// EnqueueOptions.IdempotencyKey: a retry with the same key and call gets
// the first call's id, never a second call; with another call, ErrConflict,
// which wraps idempotency.ErrConflict (409). A key that idempotency.Key.Check
// refuses is refused the same way as on a synchronous call (400).
func (h HTTP) Enqueue(ctx context.Context, op postroom.Operation, call *postroom.Call, key string) (string, error) {
	if key != "" && call != nil {
		if err := (idempotency.Key{AccountID: call.AccountID, Key: key}).Check(); err != nil {
			return "", err
		}
	}
	var id string
	err := pgx.BeginFunc(ctx, h.o.pool, func(tx pgx.Tx) error {
		var err error
		id, err = h.o.Enqueue(ctx, tx, op, call, EnqueueOptions{IdempotencyKey: key})
		return err
	})
	return id, err
}

// Status is the Outbox's Status.
func (h HTTP) Status(ctx context.Context, callID string) (*postroom.CallStatus, error) {
	return h.o.Status(ctx, callID)
}
