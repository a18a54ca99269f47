package httpapi

import (
	"net/http"
	"strconv"
	"sync"

	"golang.org/x/sync/semaphore"
)

// retryAfter is the Retry-After of a 503 answered when the server is at its
// limit of work in flight, in seconds.
const retryAfter = 5

// inflight bounds the bytes of request bodies whose calls are in flight:
// read, decoded, being sent, or being answered. A decoded call takes several
// times its body in memory (a body of tiny param keys about ten times), so
// this bounds the server's memory where Options.MaxBodyBytes alone bounds only one
// call. A request that would pass the bound is answered 503 with
// Retry-After rather than queued: the client knows at once, and a queue
// would hold the connections (and the clients' bodies) anyway.
type inflight struct {
	sem     *semaphore.Weighted
	maxBody int64
}

func newInflight(maxBytes, maxBody int64) *inflight {
	return &inflight{sem: semaphore.NewWeighted(maxBytes), maxBody: maxBody}
}

// acquire reserves r's body against the bound and returns the function
// that releases it (once, however often it is called), or false when the
// bound is reached. A body of unknown
// length (chunked) is charged as the largest allowed.
func (f *inflight) acquire(r *http.Request) (release func(), ok bool) {
	n := f.maxBody
	if r.ContentLength >= 0 && r.ContentLength < n {
		n = r.ContentLength
	}
	n = max(n, 1) // even an empty body is a call in flight
	if !f.sem.TryAcquire(n) {
		return nil, false
	}
	return sync.OnceFunc(func() { f.sem.Release(n) }), true
}

// writeBusy answers a request refused by the bound.
func writeBusy(w http.ResponseWriter) {
	w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
	writeError(w, http.StatusServiceUnavailable, &apiError{Code: "busy", Message: "the server has as much work in flight as it takes: retry later"})
}
