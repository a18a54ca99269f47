package console

// The queued calls pages: the account's calls sent later, a call's
// status with its waiting recipients, and its cancel and retry.

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/postroom/postroom"
)

// Calls is what the queued calls pages call, each over one account's
// calls: package outbox's Outbox.AccountCalls() implements it (its Status,
// Cancel and Retry answer an error wrapping postroom.ErrCallNotFound for
// a call of another account, as for an unknown id). Waiting is called
// only for a call that Status found in the account.
type Calls interface {
	Calls(ctx context.Context, accountID, cursor string, limit int) ([]postroom.CallSummary, string, error)
	Status(ctx context.Context, accountID, callID string) (*postroom.CallStatus, error)
	Waiting(ctx context.Context, callID string) ([]postroom.WaitingRecipient, error)
	Cancel(ctx context.Context, accountID, callID, reason string) (int, error)
	Retry(ctx context.Context, accountID, callID string) (int, error)
}

// callsView is the data of the calls page.
type callsView struct {
	Calls []postroom.CallSummary
	Next  string
}

// calls shows the account's calls, newest first.
func (h *Handler) calls(w http.ResponseWriter, r *http.Request) {
	account, ok := h.account(w, r)
	if !ok {
		return
	}
	v := &callsView{}
	var err error
	v.Calls, v.Next, err = h.opts.Calls.Calls(r.Context(), account, r.FormValue("cursor"), h.opts.PageSize)
	if ve := (*postroom.ValidationError)(nil); errors.As(err, &ve) {
		h.fail(w, r, http.StatusBadRequest, account, "Queued calls", "The page was refused: "+ve.Error(), nil)
		return
	}
	if err != nil {
		h.fail(w, r, http.StatusBadGateway, account, "Queued calls", "The queue could not answer; try again.", err)
		return
	}
	h.show(w, r, 0, &view{Title: "Queued calls", Account: account, Calls: v})
}

// callView is the data of a call's page. Waiting and Results are cut to
// the page size; More* say how many were left out.
type callView struct {
	Status       *postroom.CallStatus
	Counts       []count
	Waiting      []postroom.WaitingRecipient
	MoreWaiting  int
	Deferred     int
	Results      []postroom.Result
	MoreResults  int
	CanCancel    bool
	CanRetry     bool
	WaitingError bool
}

// count is one status's number of recipients.
type count struct {
	Status postroom.Status
	N      int
}

// statusOrder is the order the counts are shown in.
var statusOrder = []postroom.Status{postroom.StatusSent, postroom.StatusQueued, postroom.StatusDeferred,
	postroom.StatusRejected, postroom.StatusInvalid}

// callStatus returns the call's status, or answers the page and false.
func (h *Handler) callStatus(w http.ResponseWriter, r *http.Request, account, id, title string) (*postroom.CallStatus, bool) {
	s, err := h.opts.Calls.Status(r.Context(), account, id)
	switch {
	case errors.Is(err, postroom.ErrCallNotFound) || (err == nil && s == nil):
		h.fail(w, r, http.StatusNotFound, account, title, "This account has no call "+id+".", nil)
		return nil, false
	case err != nil:
		h.fail(w, r, http.StatusBadGateway, account, title, "The queue could not answer; try again.", err)
		return nil, false
	}
	return s, true
}

// call shows a call: its state and counts, the recipients still
// waiting with their last reason and next attempt, and, once done, its
// results and what came back later.
func (h *Handler) call(w http.ResponseWriter, r *http.Request) {
	account, ok := h.account(w, r)
	if !ok {
		return
	}
	id := strings.TrimSpace(r.FormValue("id"))
	s, ok := h.callStatus(w, r, account, id, "Queued call")
	if !ok {
		return
	}
	v := &callView{Status: s}
	seen := map[postroom.Status]bool{}
	for _, st := range statusOrder {
		if n := s.Counts[st]; n > 0 {
			v.Counts = append(v.Counts, count{st, n})
		}
		seen[st] = true
	}
	for st, n := range s.Counts {
		if !seen[st] && n > 0 {
			v.Counts = append(v.Counts, count{st, n})
		}
	}
	if s.State != postroom.CallDone {
		waiting, err := h.opts.Calls.Waiting(r.Context(), id)
		if err != nil && !errors.Is(err, postroom.ErrCallNotFound) {
			h.opts.Logger.Error("console: waiting recipients", "account_id", account, "call", id, "error", err)
			v.WaitingError = true
		}
		for _, wr := range waiting {
			if wr.State == postroom.WaitingDeferred {
				v.Deferred++
			}
		}
		v.Waiting, v.MoreWaiting = cut(waiting, h.opts.PageSize)
		v.CanCancel, v.CanRetry = true, v.Deferred > 0
	}
	v.Results, v.MoreResults = cut(s.Results, h.opts.PageSize)
	notice := ""
	if n := r.FormValue("canceled"); n != "" {
		notice = "Canceled: " + n + " recipients will not be sent."
	}
	if n := r.FormValue("retried"); n != "" {
		notice = "Retried: " + n + " deferred recipients are tried again now."
	}
	h.show(w, r, 0, &view{Title: "Call " + id, Account: account, Call: v, Notice: notice})
}

// cut returns the first n of s and how many it left out.
func cut[T any](s []T, n int) ([]T, int) {
	if len(s) <= n {
		return s, 0
	}
	return s[:n], len(s) - n
}

// cancelView is the data of the confirmation of a cancel.
type cancelView struct {
	Status *postroom.CallStatus
	Queued int
}

// confirmCancel asks whether to cancel the call; it changes nothing.
func (h *Handler) confirmCancel(w http.ResponseWriter, r *http.Request) {
	account, ok := h.account(w, r)
	if !ok {
		return
	}
	id := strings.TrimSpace(r.FormValue("id"))
	s, ok := h.callStatus(w, r, account, id, "Cancel")
	if !ok {
		return
	}
	h.show(w, r, 0, &view{Title: "Cancel call " + id, Account: account, Cancel: &cancelView{Status: s, Queued: s.Counts[postroom.StatusQueued]}})
}

// maxReason bounds the reason given for a cancel.
const maxReason = 200

// cancel cancels the call, then shows it.
func (h *Handler) cancel(w http.ResponseWriter, r *http.Request) {
	account, ok := h.account(w, r)
	if !ok {
		return
	}
	id := strings.TrimSpace(r.PostFormValue("id"))
	reason := strings.Join(strings.Fields(r.PostFormValue("reason")), " ")
	if len(reason) > maxReason {
		h.fail(w, r, http.StatusBadRequest, account, "Cancel", "The reason is longer than "+strconv.Itoa(maxReason)+" bytes.", nil)
		return
	}
	n, err := h.opts.Calls.Cancel(r.Context(), account, id, reason)
	if !h.steered(w, r, account, id, "Cancel", err) {
		return
	}
	h.opts.Logger.Info("console: canceled a call", "account_id", account, "call", id, "recipients", n)
	seeOther(w, r, "call", url.Values{"id": {id}, "canceled": {strconv.Itoa(n)}})
}

// retry has the call's deferred recipients tried now, then shows it.
func (h *Handler) retry(w http.ResponseWriter, r *http.Request) {
	account, ok := h.account(w, r)
	if !ok {
		return
	}
	id := strings.TrimSpace(r.PostFormValue("id"))
	n, err := h.opts.Calls.Retry(r.Context(), account, id)
	if !h.steered(w, r, account, id, "Retry", err) {
		return
	}
	h.opts.Logger.Info("console: retried a call", "account_id", account, "call", id, "recipients", n)
	seeOther(w, r, "call", url.Values{"id": {id}, "retried": {strconv.Itoa(n)}})
}

// steered answers the page for the error of a cancel or a retry, and
// reports whether there was none.
func (h *Handler) steered(w http.ResponseWriter, r *http.Request, account, id, title string, err error) bool {
	ve := (*postroom.ValidationError)(nil)
	switch {
	case err == nil:
		return true
	case errors.Is(err, postroom.ErrCallNotFound):
		h.fail(w, r, http.StatusNotFound, account, title, "This account has no call "+id+": nothing changed.", nil)
	case errors.As(err, &ve):
		h.fail(w, r, http.StatusBadRequest, account, title, "Refused: "+ve.Error(), nil)
	default:
		h.fail(w, r, http.StatusBadGateway, account, title, "The queue could not answer; nothing may have changed: look at the call again.", err)
	}
	return false
}
