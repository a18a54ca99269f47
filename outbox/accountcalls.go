package outbox

import (
	"context"
	"errors"
	"fmt"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/idempotency"
	"github.com/postroom/postroom/sqldb"
)

// AccountCalls is an Outbox as one account's requests see it: Enqueue
// in a transaction of its own (a request has no transaction of the
// application's to join), and Status, Calls, Cancel and Retry over the
// account's own calls only. It serves no HTTP itself: it is the Async of
// an httpapi.Handler (httpapi.Options.Async), so that a message.send or
// message.send_template request with Prefer: respond-async is enqueued
// and answered 202 Accepted with the call's id, and GET
// /api/1.0/calls/{id}, with the call's account and its key, answers its
// Status:
//
//	h, err := httpapi.New(m, httpapi.Options{Async: ob.AccountCalls()})
//
// httpapi.Async names only the root package's types, so this package
// does not import httpapi: a worker binary links no HTTP handler.
//
// AccountCalls is also an httpapi.AsyncSteering (Calls, Waiting, Cancel,
// Retry), so that the Handler serves calls.list, calls.cancel and
// calls.retry, each over the authenticated account's own calls only, and
// the recipients still waiting at GET /api/1.0/calls/{id}.
type AccountCalls struct{ o *Outbox }

// AccountCalls returns o as an httpapi.Async and httpapi.AsyncSteering.
func (o *Outbox) AccountCalls() AccountCalls { return AccountCalls{o} }

// Enqueue enqueues call as op in a transaction of its own and returns its
// id. The request's Idempotency-Key header, key, is
// EnqueueOptions.IdempotencyKey: a retry with the same key and call gets
// the first call's id, never a second call; with another call, ErrConflict,
// which wraps idempotency.ErrConflict (409). A key that idempotency.Key.Check
// refuses is refused the same way as on a synchronous call (400).
func (h AccountCalls) Enqueue(ctx context.Context, op postroom.Operation, call *postroom.Call, key string) (string, error) {
	if key != "" && call != nil {
		if err := (idempotency.Key{AccountID: call.AccountID, Key: key}).Check(); err != nil {
			return "", err
		}
	}
	// Checked before the transaction begins: on SQLite, the Mailer's
	// template store may be on the file the transaction holds.
	checked, err := h.o.m.Validate(ctx, op, call)
	if err != nil {
		return "", err
	}
	var id string
	err = sqldb.BeginFunc(ctx, h.o.db, func(tx sqldb.Tx) error {
		var err error
		id, err = h.o.enqueue(ctx, tx, op, call, checked, EnqueueOptions{IdempotencyKey: key})
		return err
	})
	return id, err
}

// Status is the Outbox's Status of call callID when it is of account
// accountID, and ErrNotFound otherwise, as for an unknown id.
func (h AccountCalls) Status(ctx context.Context, accountID, callID string) (*postroom.CallStatus, error) {
	if err := h.owned(ctx, accountID, callID); err != nil {
		return nil, err
	}
	return h.o.Status(ctx, callID)
}

// Calls is the Outbox's Calls for the account accountID, for
// httpapi.AsyncSteering: cursor is a Cursor that Calls returned. A limit
// out of 0..MaxCallsLimit, or a cursor Calls did not return, is a
// *postroom.ValidationError naming "limit" or "cursor".
func (h AccountCalls) Calls(ctx context.Context, accountID, cursor string, limit int) ([]postroom.CallSummary, string, error) {
	if limit < 0 || limit > MaxCallsLimit {
		return nil, "", &postroom.ValidationError{Field: "limit", Reason: fmt.Sprintf("%d: want 1 to %d, or 0 for %d", limit, MaxCallsLimit, DefaultCallsLimit)}
	}
	calls, next, err := h.o.Calls(ctx, CallsQuery{AccountID: accountID, Before: Cursor(cursor), Limit: limit})
	if errors.Is(err, ErrBadCursor) {
		return nil, "", &postroom.ValidationError{Field: "cursor", Reason: "not a cursor of a calls list", Err: err}
	}
	return calls, string(next), err
}

// Waiting is the Outbox's Waiting.
func (h AccountCalls) Waiting(ctx context.Context, callID string) ([]postroom.WaitingRecipient, error) {
	return h.o.Waiting(ctx, callID)
}

// Cancel is the Outbox's Cancel of a call of account accountID, with
// reason as its why; a call of another account is ErrNotFound, and is
// left as it was.
func (h AccountCalls) Cancel(ctx context.Context, accountID, callID, reason string) (int, error) {
	if err := h.owned(ctx, accountID, callID); err != nil {
		return 0, err
	}
	return h.o.Cancel(ctx, callID, reason)
}

// Retry is the Outbox's Retry of a call of account accountID; a call of
// another account is ErrNotFound, and is left as it was.
func (h AccountCalls) Retry(ctx context.Context, accountID, callID string) (int, error) {
	if err := h.owned(ctx, accountID, callID); err != nil {
		return 0, err
	}
	return h.o.Retry(ctx, callID)
}

// owned returns ErrNotFound unless call callID is of account accountID.
// A call's account never changes, so the check holds for the steering
// that follows it.
func (h AccountCalls) owned(ctx context.Context, accountID, callID string) error {
	var ok bool
	err := h.o.db.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM postroom_outbox_calls WHERE id = $1 AND account_id = $2)`, callID, accountID).Scan(&ok)
	if err != nil {
		return fmt.Errorf("outbox: account of call %s: %w", callID, err)
	}
	if !ok {
		return ErrNotFound
	}
	return nil
}
