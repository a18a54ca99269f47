package console

// The messages pages: a search by address or send id, and a message's
// timeline.

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/postroom/postroom/events"
)

// Activity is what the messages pages call: events.Activity, which
// events.Memory and events.SQL implement.
type Activity interface {
	Search(ctx context.Context, q events.Query) ([]events.Message, string, error)
	Info(ctx context.Context, accountID, sendID string) (events.Message, bool, error)
}

var _ Activity = events.Activity(nil)

// messagesView is the data of the messages page.
type messagesView struct {
	Q, State string
	States   []events.State
	Found    []events.Message
	Next     string
	Searched bool
}

// states are the states a search can select, in the form's order.
var states = []events.State{events.StateQueued, events.StateSent, events.StateDeferred, events.StateRejected,
	events.StateBounced, events.StateSoftBounced, events.StateSpam, events.StateUnsub}

// messages shows the account's messages that the form selects, newest
// first: by address (q holds an @), by send id (any other q), by state.
func (h *Handler) messages(w http.ResponseWriter, r *http.Request) {
	account, ok := h.account(w, r)
	if !ok {
		return
	}
	v := &messagesView{Q: strings.TrimSpace(r.FormValue("q")), State: r.FormValue("state"), States: states}
	q := events.Query{AccountID: account, State: events.State(v.State), Limit: h.opts.PageSize, Cursor: r.FormValue("cursor")}
	switch {
	case strings.Contains(v.Q, "@"):
		q.Email = v.Q
	case v.Q != "":
		q.SendID = v.Q
	}
	v.Searched = v.Q != "" || v.State != ""
	var err error
	v.Found, v.Next, err = h.opts.Activity.Search(r.Context(), q)
	switch {
	case errors.Is(err, events.ErrBadQuery), errors.Is(err, events.ErrBadCursor):
		h.show(w, r, http.StatusBadRequest, &view{Title: "Messages", Account: account, Messages: v, Problem: "The search was refused: " + err.Error()})
		return
	case err != nil:
		h.fail(w, r, http.StatusBadGateway, account, "Messages", "The message store could not answer; try again.", err)
		return
	}
	h.show(w, r, 0, &view{Title: "Messages", Account: account, Messages: v})
}

// messageView is the data of a message's page.
type messageView struct {
	events.Message
}

// message shows the message of send id "id" and its timeline.
func (h *Handler) message(w http.ResponseWriter, r *http.Request) {
	account, ok := h.account(w, r)
	if !ok {
		return
	}
	id := strings.TrimSpace(r.FormValue("id"))
	m, found, err := h.opts.Activity.Info(r.Context(), account, id)
	switch {
	case err != nil:
		h.fail(w, r, http.StatusBadGateway, account, "Message", "The message store could not answer; try again.", err)
		return
	case !found:
		h.fail(w, r, http.StatusNotFound, account, "Message", "No message of this account has send id "+id+".", nil)
		return
	}
	h.show(w, r, 0, &view{Title: "Message to " + m.Email, Account: account, Message: &messageView{m}})
}
