package idempotency

import (
	"github.com/postroom/postroom/option"

	"context"
	"errors"
	"fmt"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/postroom/postroom"
)

// Sentinel errors. Run returns them before anything is sent.
var (
	// ErrConflict: the key's record belongs to a call with another payload
	// (another operation, or a call body that differs in any field, the API
	// key included). Nothing was sent.
	ErrConflict = errors.New("idempotency: key used with another payload")
	// ErrInProgress: another call with the key is running, in this process
	// or in another one sharing the store. Nothing was sent; retry later, or
	// call Wait first. Run never waits on its own.
	ErrInProgress = errors.New("idempotency: a call with this key is in progress")
	// ErrInvalidKey: the key is empty, longer than MaxKeyBytes, not UTF-8,
	// or holds a control character.
	ErrInvalidKey = errors.New("idempotency: invalid key")
	// ErrStore is wrapped by the error Run returns, together with every
	// result, when the store failed while the call ran: the results are
	// right, but the record may lack some of them (see Run).
	ErrStore = errors.New("idempotency: recording the call failed")
)

// errClaimLost is what a Claim's writes return once another call took the
// key over (see Store): the holder is presumed dead, so its writes are
// refused and its next messages kept back.
var errClaimLost = errors.New("idempotency: the key was taken over by another call")

// MaxKeyBytes is the longest idempotency key, in bytes: 255, as Stripe's.
const MaxKeyBytes = 255

// DefaultRetention is how long a record answers retries when
// Options.Retention is zero: 24 hours.
const DefaultRetention = 24 * time.Hour

// Key names one idempotent call: the key the caller chose, scoped by the
// call's account, so that two accounts never see each other's calls.
type Key struct {
	AccountID string
	Key       string
}

// Check returns an error wrapping ErrInvalidKey when k.Key is not fit: the
// rule every Store applies, for callers that keep keys of their own.
func (k Key) Check() error {
	switch {
	case k.Key == "":
		return fmt.Errorf("%w: empty", ErrInvalidKey)
	case len(k.Key) > MaxKeyBytes:
		return fmt.Errorf("%w: longer than %d bytes", ErrInvalidKey, MaxKeyBytes)
	case !utf8.ValidString(k.Key):
		return fmt.Errorf("%w: not UTF-8", ErrInvalidKey)
	}
	for _, r := range k.Key {
		if unicode.IsControl(r) {
			return fmt.Errorf("%w: holds a control character", ErrInvalidKey)
		}
	}
	return nil
}

// Hash identifies a call's payload: SHA-256 of its operation and its
// canonical body (see HashCall).
type Hash [32]byte

// Options configure a store. The zero value keeps records for
// DefaultRetention, by the system clock.
type Options struct {
	// Retention is how long after a call started its record answers
	// retries with the same key. Past it, the key is free again: a call
	// with it runs as new, whatever its payload. Zero means
	// DefaultRetention (24 hours); a negative value is refused.
	// DeleteExpired removes the records past it.
	Retention time.Duration
	// Now is the clock. Nil means time.Now.
	Now func() time.Time
}

// setDefaults gives every zero field of o its default, by the root
// package's rule: zero means the default, and a negative value is
// refused. NewMemory and NewSQL call it first.
func (o *Options) setDefaults(op string) error {
	if err := option.Default(op, "Options.Retention", &o.Retention, DefaultRetention); err != nil {
		return err
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return nil
}

// Entry is what a record holds for one recipient of its call.
type Entry struct {
	// Index is the recipient's index in the call's recipients.
	Index int
	// Result is the recipient's final result (Email and Err are not kept).
	// Its Status is empty while the recipient was handed to the transport
	// (Result.SendID names the message) without a final result yet: after
	// a crash, such a recipient may have been sent.
	Result postroom.Result
}

// Final reports whether the recipient has a final result.
func (e Entry) Final() bool { return e.Result.Status != "" }

// Store keeps the record of idempotent calls: for each Key, the payload's
// Hash, when the call started, and an Entry per recipient that reached the
// transport or has a final result. Memory keeps it in one process; SQL in
// PostgreSQL, shared by many, or in SQLite, for one process.
//
// The contract, which Run relies on:
//
//   - Claim takes the key for one call, or fails at once with
//     ErrInProgress when a live call holds it; it never waits. The key
//     stays taken until Claim.Release, or until the holder dies (its
//     process, or for SQL on PostgreSQL the database connection holding
//     its lock): then the next Claim
//     takes it over, and the dead holder's later writes are refused (a
//     Claim that lost its key gets errors from HandOver and Finish), so
//     that two holders never both hand the same recipient over.
//   - A record with entries and another Hash gives ErrConflict; a record
//     without entries, or older than the retention window, counts as
//     absent and is taken over with the new Hash.
//   - HandOver and Finish are durable when they return nil: a Claim
//     after a crash sees them.
//   - Wait blocks until no live call holds the key, or ctx is done.
//
// All methods are safe for concurrent use.
type Store interface {
	Claim(ctx context.Context, k Key, h Hash) (Claim, error)
	Wait(ctx context.Context, k Key) error
	// DeleteExpired deletes the records of calls started before before,
	// and reports how many it deleted.
	DeleteExpired(ctx context.Context, before time.Time) (int, error)
}

// Claim is one call's hold on its key. Its methods are safe for concurrent
// use: the call's workers record their recipients at once.
type Claim interface {
	// Entries returns the record's entries when it was claimed, in index
	// order: empty for a new call.
	Entries() []Entry
	// HandOver records that recipient i's message, with send id sendID, is
	// about to be handed to the transport.
	HandOver(ctx context.Context, i int, sendID string) error
	// Finish records recipient i's final result.
	Finish(ctx context.Context, i int, r postroom.Result) error
	// Release frees the key. A record left without entries is deleted:
	// the key is free for any payload again.
	Release(ctx context.Context) error
}
