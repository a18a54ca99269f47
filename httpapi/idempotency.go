package httpapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/postroom/postroom/idempotency"
)

// idempotencyHeader names the request header that makes a call idempotent,
// as Stripe's, Resend's and SparkPost's APIs have it.
const idempotencyHeader = "Idempotency-Key"

// inProgressRetryAfter is the Retry-After, in seconds, of a 409
// idempotency_in_progress: a call of a few thousand recipients takes about
// that long.
const inProgressRetryAfter = 5

// Errors of idempotencyKey: a request with two Idempotency-Key headers,
// or with an empty one.
var (
	errKeyRepeated = fmt.Errorf("%w: the %s header is repeated", idempotency.ErrInvalidKey, idempotencyHeader)
	errKeyEmpty    = fmt.Errorf("%w: the %s header is empty", idempotency.ErrInvalidKey, idempotencyHeader)
)

// idempotent is the store of a handler's idempotent calls, and when its
// expired records were last deleted.
type idempotent struct {
	store idempotency.Store
	now   func() time.Time

	mu    sync.Mutex
	swept time.Time
}

// idempotencyKey returns r's Idempotency-Key header: "" without one,
// errKeyEmpty when it is empty, errKeyRepeated when it is given twice.
// The rest of the key's checks are made where it is kept
// (idempotency.Key.Check).
func idempotencyKey(r *http.Request) (string, error) {
	switch keys := r.Header.Values(idempotencyHeader); {
	case len(keys) == 0:
		return "", nil
	case len(keys) > 1:
		return "", errKeyRepeated
	case keys[0] == "":
		return "", errKeyEmpty
	default:
		return keys[0], nil
	}
}

// sweep deletes the records past the retention window, at most once an
// hour, on the request that finds the last sweep an hour old: no goroutine
// of its own.
func (s *idempotent) sweep(ctx context.Context, logger *slog.Logger) {
	now := s.now()
	s.mu.Lock()
	due := now.Sub(s.swept) >= time.Hour
	if due {
		s.swept = now
	}
	s.mu.Unlock()
	if !due {
		return
	}
	if _, err := s.store.DeleteExpired(ctx, now.Add(-idempotency.DefaultRetention)); err != nil {
		logger.LogAttrs(ctx, slog.LevelWarn, "deleting expired idempotency records", slog.Any("error", err))
	}
}

// idempotencyError maps the errors of an idempotent call to an HTTP status
// and body, or returns 0 for any other error. It sets Retry-After on a 409
// idempotency_in_progress.
func idempotencyError(w http.ResponseWriter, err error) (int, *apiError) {
	switch {
	case errors.Is(err, idempotency.ErrInvalidKey):
		return http.StatusBadRequest, &apiError{Code: "invalid_idempotency_key", Message: "the " + idempotencyHeader + " header must be one key of 1 to 255 bytes of UTF-8 without control characters"}
	case errors.Is(err, idempotency.ErrConflict):
		return http.StatusConflict, &apiError{Code: "idempotency_conflict", Message: "this " + idempotencyHeader + " was used with another request body"}
	case errors.Is(err, errBusy):
		w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
		return http.StatusServiceUnavailable, &apiError{Code: "busy", Message: "the server has as many idempotent calls in flight as it takes: retry later"}
	case errors.Is(err, idempotency.ErrInProgress):
		w.Header().Set("Retry-After", strconv.Itoa(inProgressRetryAfter))
		return http.StatusConflict, &apiError{Code: "idempotency_in_progress", Message: "a call with this " + idempotencyHeader + " is still running: retry after Retry-After seconds"}
	}
	return 0, nil
}

// newIdempotent returns the idempotent calls kept in store, or in memory
// when store is nil; at most max claims held at once unless max is 0.
func newIdempotent(store idempotency.Store, max int) (*idempotent, error) {
	if store == nil {
		mem, err := idempotency.NewMemory(idempotency.Options{})
		if err != nil {
			return nil, err
		}
		store = mem
	}
	if max > 0 {
		store = &boundedStore{Store: store, slots: make(chan struct{}, max)}
	}
	return &idempotent{store: store, now: time.Now}, nil
}

// errBusy is Claim's error when Options.MaxIdempotentCalls are in flight.
var errBusy = errors.New("too many idempotent calls in flight")

// boundedStore lets at most cap(slots) claims be held at once, and refuses
// the next with errBusy rather than let calls wait for connections that
// the calls holding them need too.
type boundedStore struct {
	idempotency.Store
	slots chan struct{}
}

func (s *boundedStore) Claim(ctx context.Context, k idempotency.Key, h idempotency.Hash) (idempotency.Claim, error) {
	select {
	case s.slots <- struct{}{}:
	default:
		return nil, errBusy
	}
	c, err := s.Store.Claim(ctx, k, h)
	if err != nil {
		<-s.slots
		return nil, err
	}
	return &boundedClaim{Claim: c, slots: s.slots}, nil
}

// boundedClaim gives its slot back on Release.
type boundedClaim struct {
	idempotency.Claim
	slots chan struct{}
}

func (c *boundedClaim) Release(ctx context.Context) error {
	defer func() { <-c.slots }()
	return c.Claim.Release(ctx)
}
