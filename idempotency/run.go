package idempotency

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/accountid"
	"github.com/postroom/postroom/internal/callhash"
)

// HashCall returns the Hash of call as operation op: SHA-256 of the
// operation's name and the call's canonical JSON (encoding/json of the
// Call: fields in a fixed order, the keys of params and their objects in
// the order they were decoded in, which {{#each}} follows), so that two
// bodies that differ only in spacing or field order have the same Hash. The API key
// is part of the body: a replay answers only the credentials the call was
// made with.
func HashCall(op postroom.Operation, call *postroom.Call) (Hash, error) {
	sum, err := callhash.Sum(op, call)
	if err != nil {
		return Hash{}, fmt.Errorf("idempotency: %w", err)
	}
	return sum, nil
}

// Run runs call as op through m, once per key: the first call with key in
// call's account sends; a retry with the same key and the same payload
// (see HashCall) within the store's retention window returns the recorded
// results and sends nothing again. It returns exactly one Result per
// recipient, in input order, as Mailer.Run does.
//
// Before anything is sent:
//   - an invalid key gives an error wrapping ErrInvalidKey;
//   - the same key with another payload gives ErrConflict;
//   - the same key while its first call is still running, in this process
//     or another one sharing the store, gives ErrInProgress (Run does not
//     wait; Store.Wait does);
//   - a call the Mailer refuses as a whole (ErrUnauthorized, a
//     *ValidationError, ...) gives the Mailer's error and records nothing.
//
// While the call runs, each recipient is recorded as handed over just
// before the transport gets its message (RunOptions.BeforeSend), and with
// its final result as soon as it has one (RunOptions.OnResult). A retry
// after a crash mid-call sends only to the recipients without either: a
// recipient handed over without a final result comes back unknown with
// reason postroom.ReasonInterrupted, never sent twice.
//
// Results that say the message was never handed over stay open, not
// recorded: deferred with reason canceled or timeout (ctx ended before the
// recipient's turn), transport-unusable without a send id (the transport
// became unusable first) and not-sent. A retry with the same key sends to
// them, so a client whose call timed out can retry it as is. Every other
// result is final: a retry returns it as recorded, deferred ones included;
// send those again with a new key.
//
// Recorded results come back with their Status, Reason, Code and SendID,
// the Email from call, and no Err. A retry whose recipients all have
// recorded results does not reach the Mailer, so Options.Auth is not asked
// again: the API key is part of the payload's Hash, so only a call with
// the credentials the first was accepted with gets them (a key revoked
// since still does, within the retention window).
//
// When the store fails mid-call (HandOver or Finish returns an error), the
// messages not yet handed over are kept back (deferred, not-sent, with the
// store's error in Result.Err) and Run returns every result together with
// an error wrapping ErrStore. When ctx ends or the transport becomes
// unusable, Run returns every result with the Mailer's error.
func Run(ctx context.Context, s Store, m *postroom.Mailer, key string, op postroom.Operation, call *postroom.Call) ([]postroom.Result, error) {
	return RunWith(ctx, s, m, key, op, call, postroom.RunOptions{})
}

// RunWith is Run with the caller's own per-call settings. o.OnResult
// receives every recipient's Result exactly once, after it is recorded:
// the results a retry finds recorded first (from the calling goroutine,
// before the Mailer runs), then the others as the Mailer makes them final.
// o.BeforeSend runs before the recipient is recorded as handed over, so
// that a message it keeps back stays open for a retry. Neither is called
// for a call refused as a whole by the key's check, the store or, on a
// first call, the Mailer.
func RunWith(ctx context.Context, s Store, m *postroom.Mailer, key string, op postroom.Operation, call *postroom.Call, o postroom.RunOptions) (results []postroom.Result, err error) {
	if call == nil {
		return nil, &postroom.ValidationError{Field: "call", Reason: "nil"}
	}
	// The Mailer refuses such an account too, but only after the key is
	// claimed: the store must not see it.
	if reason := accountid.Check(call.AccountID); reason != "" {
		return nil, &postroom.ValidationError{Field: "account_id", Reason: reason}
	}
	k := Key{AccountID: call.AccountID, Key: key}
	if err := k.Check(); err != nil {
		return nil, err
	}
	h, err := HashCall(op, call)
	if err != nil {
		return nil, err
	}
	c, err := s.Claim(ctx, k, h)
	if err != nil {
		return nil, err
	}
	// Release even when ctx is done or the transport panics: a key left
	// held would answer ErrInProgress until the process ends.
	defer func() {
		if rerr := c.Release(context.WithoutCancel(ctx)); rerr != nil {
			err = errors.Join(err, fmt.Errorf("%w: releasing the key: %w", ErrStore, rerr))
		}
	}()
	return run(ctx, c, m, op, call, o)
}

// run completes the call held by c: the recorded results, and a call of
// the Mailer for the recipients without one.
func run(ctx context.Context, c Claim, m *postroom.Mailer, op postroom.Operation, call *postroom.Call, o postroom.RunOptions) ([]postroom.Result, error) {
	n := len(call.Recipients)
	results := make([]postroom.Result, n)
	for _, e := range c.Entries() {
		if e.Index < 0 || e.Index >= n {
			return nil, fmt.Errorf("%w: the record has recipient %d of a call of %d", ErrStore, e.Index, n)
		}
		r := e.Result
		if !e.Final() {
			r = postroom.Result{
				Status: postroom.StatusUnknown,
				Code:   postroom.ReasonInterrupted,
				Reason: string(postroom.ReasonInterrupted) + ": an earlier call with this key handed the message over and stopped before its outcome was known",
				SendID: r.SendID,
			}
		}
		r.Email = call.Recipients[e.Index].Email
		results[e.Index] = r
	}
	var pending []int
	for i := range results {
		if results[i].Status == "" {
			pending = append(pending, i)
		}
	}
	report := func(i int, r postroom.Result) {
		if o.OnResult != nil {
			o.OnResult(i, r)
		}
	}
	for i, r := range results {
		if r.Status != "" {
			report(i, r) // recorded by an earlier call with the key
		}
	}
	if len(pending) == 0 && n > 0 {
		return results, nil // a replay: the payload's Hash holds the API key
	}
	p, err := m.Prepare(ctx, op, call)
	if err != nil {
		return nil, err // refused as a whole: nothing recorded
	}

	var rec recording
	ro := postroom.RunOptions{
		BeforeSend: func(ctx context.Context, i int, sendID string) error {
			if err := rec.failed(); err != nil {
				return err
			}
			if o.BeforeSend != nil {
				if err := o.BeforeSend(ctx, i, sendID); err != nil {
					return err
				}
			}
			return rec.note(c.HandOver(ctx, i, sendID))
		},
		OnResult: func(i int, r postroom.Result) {
			if !open(r) && rec.failed() == nil {
				rec.note(c.Finish(context.WithoutCancel(ctx), i, r))
			}
			report(i, r)
		},
	}
	var ran []postroom.Result
	if len(pending) == n {
		ran, err = p.Run(ctx, ro)
	} else {
		ran, err = p.RunSome(ctx, pending, ro)
	}
	if ran == nil {
		return nil, err // refused as a whole (Options.Rand failed): nothing recorded
	}
	if len(pending) == n {
		results = ran
	} else {
		for k, i := range pending {
			results[i] = ran[k]
		}
	}
	if serr := rec.failed(); serr != nil {
		err = errors.Join(err, fmt.Errorf("%w: %w", ErrStore, serr))
	}
	return results, err
}

// open reports whether r says the recipient's message was never handed
// over, so that a retry with the key must still send it: r is not
// recorded.
func open(r postroom.Result) bool {
	if r.Status != postroom.StatusDeferred {
		return false
	}
	switch r.Code {
	case postroom.ReasonNotSent:
		return true
	case postroom.ReasonCanceled, postroom.ReasonTimeout, postroom.ReasonConnectionFailed, postroom.ReasonTransportUnusable:
		return r.SendID == ""
	}
	return false
}

// recording keeps the first error of the store while a call runs: after
// it, nothing more is recorded and no message leaves.
type recording struct {
	mu  sync.Mutex
	err error
}

// note keeps err if it is the first, and returns it.
func (r *recording) note(err error) error {
	if err != nil {
		r.mu.Lock()
		if r.err == nil {
			r.err = err
		}
		r.mu.Unlock()
	}
	return err
}

func (r *recording) failed() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}
