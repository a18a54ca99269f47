package httpapi

// Listing and steering the calls run later: calls.list, calls.cancel,
// calls.retry, and the waiting recipients of GET CallsPath + id.

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/postroom/postroom"
)

// Paths of the endpoints that list and steer the calls run later, served
// when Options.Async is also an AsyncSteering.
const (
	CallsListPath   = "/api/1.0/calls.list"
	CallsCancelPath = "/api/1.0/calls.cancel"
	CallsRetryPath  = "/api/1.0/calls.retry"
)

// AsyncSteering is the optional capability of an Async that lists its
// calls and steers them: when Options.Async implements it, the Handler
// serves calls.list, calls.cancel and calls.retry (see the package
// documentation, # Calls run later) and adds the recipients still waiting
// to GET CallsPath + id. Like Async, it names only the root package's
// types (package outbox's Outbox.AccountCalls implements it).
//
// The Handler has authenticated accountID with the Mailer's
// Options.Auth before each call but Waiting; the implementation keeps the
// accounts apart: a call of another account is an error wrapping
// postroom.ErrCallNotFound, as an unknown id is, and nothing is changed
// or revealed of it.
//
// Calls lists the calls of accountID, newest first, at most limit of them
// (zero: the implementation's default), from cursor on ("" for the
// newest), and returns the cursor of the next page, "" when there is
// none. A limit or cursor it refuses is a *postroom.ValidationError whose
// Field is "limit" or "cursor" (answered 400).
//
// Waiting returns the recipients of call callID without a final result,
// in the call's order: an empty list for a done call, an error wrapping
// postroom.ErrCallNotFound for an unknown id.
//
// Cancel cancels the call: each recipient not yet handed over becomes
// final (never sent), with reason in its Result's reason, and it returns
// how many it settled; a recipient whose message may be on its way keeps
// the outcome of its attempt. Retry makes the call's recipients that wait
// for a retry be tried now, and returns how many.
//
// The methods are called from the Handler's requests, concurrently, and
// must be safe for concurrent use; none may outlive its ctx.
type AsyncSteering interface {
	Calls(ctx context.Context, accountID, cursor string, limit int) (calls []postroom.CallSummary, next string, err error)
	Waiting(ctx context.Context, callID string) ([]postroom.WaitingRecipient, error)
	Cancel(ctx context.Context, accountID, callID, reason string) (settled int, err error)
	Retry(ctx context.Context, accountID, callID string) (retried int, err error)
}

// callsListRequest is the body of calls.list.
type callsListRequest struct {
	rejectsAuth
	Limit  int    `json:"limit"`
	Cursor string `json:"cursor"`
}

// callsCancelRequest is the body of calls.cancel.
type callsCancelRequest struct {
	rejectsAuth
	ID     string `json:"id"`
	Reason string `json:"reason"`
}

// callsCancelAnswer is the answer of calls.cancel.
type callsCancelAnswer struct {
	ID       string `json:"id"`
	Canceled int    `json:"canceled"`
}

// callsRetryRequest is the body of calls.retry.
type callsRetryRequest struct {
	rejectsAuth
	ID string `json:"id"`
}

// callsRetryAnswer is the answer of calls.retry.
type callsRetryAnswer struct {
	ID      string `json:"id"`
	Retried int    `json:"retried"`
}

// callAnswer is the answer of GET CallsPath + id: the call's status and,
// with an AsyncSteering, its recipients still waiting (absent when none).
type callAnswer struct {
	*postroom.CallStatus
	Waiting []postroom.WaitingRecipient `json:"waiting,omitempty"`
}

// maxCancelReason is the longest reason calls.cancel takes, in bytes: it
// is kept in every cancelled recipient's result.
const maxCancelReason = 1000

// mountCalls serves the steering endpoints on mux over s, with the keys
// of m's Options.Auth.
func (h *Handler) mountCalls(mux *http.ServeMux, m *postroom.Mailer, s AsyncSteering) {
	mux.Handle(CallsListPath, authEndpoint(m, "calls.list", func(ctx context.Context, w http.ResponseWriter, req *callsListRequest) (any, error) {
		calls, next, err := s.Calls(ctx, req.AccountID, req.Cursor, req.Limit)
		if err != nil {
			return nil, err
		}
		if next != "" {
			w.Header().Set(NextCursorHeader, next)
		}
		if calls == nil {
			calls = []postroom.CallSummary{}
		}
		addLogAttrs(w, slog.Int("calls", len(calls)))
		return calls, nil
	}))
	mux.Handle(CallsCancelPath, authEndpoint(m, "calls.cancel", func(ctx context.Context, w http.ResponseWriter, req *callsCancelRequest) (any, error) {
		if err := checkCallID(req.ID); err != nil {
			return nil, err
		}
		if err := checkText("reason", req.Reason, maxCancelReason); err != nil {
			return nil, err
		}
		addLogAttrs(w, slog.String("call_id", req.ID))
		n, err := s.Cancel(ctx, req.AccountID, req.ID, req.Reason)
		if err != nil {
			return nil, err
		}
		return callsCancelAnswer{ID: req.ID, Canceled: n}, nil
	}))
	mux.Handle(CallsRetryPath, authEndpoint(m, "calls.retry", func(ctx context.Context, w http.ResponseWriter, req *callsRetryRequest) (any, error) {
		if err := checkCallID(req.ID); err != nil {
			return nil, err
		}
		addLogAttrs(w, slog.String("call_id", req.ID))
		n, err := s.Retry(ctx, req.AccountID, req.ID)
		if err != nil {
			return nil, err
		}
		return callsRetryAnswer{ID: req.ID, Retried: n}, nil
	}))
}

// maxCallID is the longest call id the steering endpoints take, in
// bytes: an outbox's ids are 32.
const maxCallID = 255

// checkCallID refuses an empty call id, and one no queue gives.
func checkCallID(id string) error {
	if id == "" {
		return &postroom.ValidationError{Field: "id", Reason: "missing: the call's id, as the 202 answer gave it"}
	}
	return checkText("id", id, maxCallID)
}

// checkText refuses a value of field that is over max bytes, not UTF-8,
// or holds a control character (a NUL, a line break), which a reason
// kept in every result, or an id, never has.
func checkText(field, v string, max int) error {
	switch {
	case len(v) > max:
		return &postroom.ValidationError{Field: field, Reason: "over " + strconv.Itoa(max) + " bytes"}
	case !utf8.ValidString(v):
		return &postroom.ValidationError{Field: field, Reason: "not valid UTF-8"}
	case strings.ContainsFunc(v, unicode.IsControl):
		return &postroom.ValidationError{Field: field, Reason: "holds a control character"}
	}
	return nil
}
