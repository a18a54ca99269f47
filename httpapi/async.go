package httpapi

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"github.com/postroom/postroom"
)

// Async runs calls later, outside the request that made them: it is the
// extension point of Options.Async for a durable outbox (a queue in a
// database whose workers run each call with the Mailer). The Handler
// hands it the calls of requests that prefer it (Prefer: respond-async,
// RFC 7240), answers them 202 Accepted with the call's id, and serves the
// call's status at CallsPath + id. Its methods name only the root
// package's types, so a queue implements it without importing this
// package (package outbox's Outbox.AccountCalls does).
//
// Enqueue stores call to be run as operation op and returns its id. It
// must have checked what Mailer.Run checks before sending anything (the
// key, the fields, the stored templates) and return the same call-level
// errors, which the Handler maps to the same statuses (see the package
// documentation, # Errors); an error it does not know is a 500. When it
// returns nil, the call is stored durably: it will run even if this
// process dies. idempotencyKey is the request's Idempotency-Key header, ""
// without one, scoped by the call's account as idempotency.Key is:
// Enqueue with a key already used with the same call returns the first
// call's id and stores nothing; with another call, an error wrapping
// idempotency.ErrConflict. The Handler has checked that
// the key is one header value, and nothing more: Enqueue refuses a key it
// cannot keep with an error wrapping idempotency.ErrInvalidKey. Enqueue
// must not modify call, nor keep it after it returns; ctx is the
// request's.
//
// Status returns the state of the call id returned by Enqueue, when the
// call is of account accountID, or an error wrapping
// postroom.ErrCallNotFound: for an unknown id, and for a call of another
// account, of which nothing is revealed. The Handler has authenticated
// accountID with the Mailer's Options.Auth before (the GET carries the
// account's key, see KeyHeader): the results name the recipients, and
// only the account's key reads them. Ids should still be unguessable
// (128 random bits or more).
//
// Both methods are called from the Handler's requests, concurrently, and
// must be safe for concurrent use; neither may outlive its ctx.
type Async interface {
	Enqueue(ctx context.Context, op postroom.Operation, call *postroom.Call, idempotencyKey string) (callID string, err error)
	Status(ctx context.Context, accountID, callID string) (*postroom.CallStatus, error)
}

// KeyHeader is the request header that carries the account's key in a
// GET of CallsPath + id, whose account_id query parameter names the
// account (the 202's Location has it): a key in a header stays out of
// URLs, and so out of access logs and browser histories.
const KeyHeader = "X-Postroom-Key"

// prefersAsync reports whether r has Prefer: respond-async (RFC 7240 §4.1),
// among other preferences or not.
func prefersAsync(r *http.Request) bool {
	for _, v := range r.Header.Values("Prefer") {
		for pref := range strings.SplitSeq(v, ",") {
			name, _, _ := strings.Cut(pref, ";")
			name, _, _ = strings.Cut(name, "=")
			if strings.EqualFold(strings.TrimSpace(name), "respond-async") {
				return true
			}
		}
	}
	return false
}

// enqueue hands call to Options.Async and answers 202 with its id, or the
// error's status.
func (h *Handler) enqueue(ctx context.Context, w http.ResponseWriter, r *http.Request, op postroom.Operation, call *postroom.Call) {
	key, err := idempotencyKey(r)
	var id string
	if err == nil {
		id, err = h.opts.Async.Enqueue(ctx, op, call, key)
	}
	if err != nil {
		status, e := idempotencyError(w, err)
		if status == 0 {
			status, e = callError(err)
		}
		if status == http.StatusInternalServerError {
			logError(w, slog.LevelError, err.Error())
		}
		writeError(w, status, e)
		return
	}
	addLogAttrs(w, slog.String("call_id", id))
	// The account goes with the id; the key, in KeyHeader, stays with
	// the client.
	w.Header().Set("Location", CallsPath+id+"?"+url.Values{"account_id": {call.AccountID}}.Encode())
	w.Header().Set("Preference-Applied", "respond-async")
	_ = writeJSON(w, http.StatusAccepted, &postroom.CallStatus{ID: id, State: postroom.CallQueued})
}

// callStatus serves GET CallsPath + id?account_id=ACCOUNT with the
// account's key in KeyHeader, authenticated with m's Options.Auth, from
// Options.Async and, when steer is not nil, the call's recipients still
// waiting from it. Without the key or the account it answers 401; a call
// of another account is 404, as an unknown id is.
func (h *Handler) callStatus(m *postroom.Mailer, steer AsyncSteering) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			writeError(w, http.StatusMethodNotAllowed, &apiError{Code: "method_not_allowed", Message: r.Method + " is not allowed: use GET"})
			return
		}
		id := strings.TrimPrefix(r.URL.Path, CallsPath)
		if id == "" || strings.Contains(id, "/") {
			writeError(w, http.StatusNotFound, &apiError{Code: "not_found", Message: "no such call"})
			return
		}
		account, key := r.URL.Query().Get("account_id"), r.Header.Get(KeyHeader)
		if account == "" || key == "" {
			writeError(w, http.StatusUnauthorized, &apiError{Code: "invalid_key", Message: "a call's status needs its account: the account_id query parameter (the 202's Location has it) and the account's key in the " + KeyHeader + " header"})
			return
		}
		if ve := checkAccount(account); ve != nil {
			writeValidationError(w, ve)
			return
		}
		addLogAttrs(w, slog.String("account_id", account))
		if err := m.Authenticate(r.Context(), account, key); err != nil {
			status, e := callError(err)
			if status == http.StatusInternalServerError {
				logError(w, slog.LevelError, err.Error())
			}
			writeError(w, status, e)
			return
		}
		st, err := h.opts.Async.Status(r.Context(), account, id)
		switch {
		case errors.Is(err, postroom.ErrCallNotFound):
			writeError(w, http.StatusNotFound, &apiError{Code: "not_found", Message: "no such call"})
			return
		case err != nil:
			logError(w, slog.LevelError, err.Error())
			writeError(w, http.StatusInternalServerError, &apiError{Code: "internal", Message: "internal error"})
			return
		}
		answer := callAnswer{CallStatus: st}
		if steer != nil && st.State != postroom.CallDone {
			// Read after the status: a recipient that got its result in
			// between counts as queued and is not listed, so the list
			// never holds more than the queued count.
			answer.Waiting, err = steer.Waiting(r.Context(), id)
			switch {
			case errors.Is(err, postroom.ErrCallNotFound):
				writeError(w, http.StatusNotFound, &apiError{Code: "not_found", Message: "no such call"})
				return
			case err != nil:
				logError(w, slog.LevelError, err.Error())
				writeError(w, http.StatusInternalServerError, &apiError{Code: "internal", Message: "internal error"})
				return
			}
		}
		addLogAttrs(w, slog.String("call_id", id), slog.String("state", string(st.State)))
		_ = writeJSON(w, http.StatusOK, answer)
	}
}
