package events

// Message activity: what happened to each message, drawn from its events.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/postroom/postroom"
)

// State is where a message stands, derived from the latest event of its
// timeline; the values are Mandrill's message states. The zero State in
// a Query means any state.
type State string

// States of a message.
const (
	// StateSent: the message was handed over (its latest event is a send).
	StateSent State = "sent"
	// StateDeferred: the latest attempt failed and may be retried.
	StateDeferred State = "deferred"
	// StateRejected: not sent, the suppression list names the address.
	StateRejected State = "rejected"
	// StateBounced: the address is dead (a hard bounce).
	StateBounced State = "bounced"
	// StateSoftBounced: delivery failed for good for this message.
	StateSoftBounced State = "soft-bounced"
	// StateSpam: the recipient complained.
	StateSpam State = "spam"
	// StateUnsub: the recipient unsubscribed.
	StateUnsub State = "unsub"
	// StateQueued: stored to be sent later (a queued event), not tried
	// yet.
	StateQueued State = "queued"
)

// stateOf is the state an event of type t leaves a message in.
func stateOf(t postroom.EventType) State {
	switch t {
	case postroom.EventSend:
		return StateSent
	case postroom.EventDeferral:
		return StateDeferred
	case postroom.EventReject:
		return StateRejected
	case postroom.EventHardBounce:
		return StateBounced
	case postroom.EventSoftBounce:
		return StateSoftBounced
	case postroom.EventSpam:
		return StateSpam
	case postroom.EventUnsub:
		return StateUnsub
	case postroom.EventQueued:
		return StateQueued
	}
	return ""
}

// eventsOf are the event types that leave a message in state s.
func eventsOf(s State) []string {
	var out []string
	for _, t := range []postroom.EventType{postroom.EventSend, postroom.EventDeferral, postroom.EventReject,
		postroom.EventHardBounce, postroom.EventSoftBounce, postroom.EventSpam, postroom.EventUnsub, postroom.EventQueued} {
		if stateOf(t) == s {
			out = append(out, string(t))
		}
	}
	return out
}

// opens reports whether an event of type t can be the first of a
// message's timeline: the sending path's results (a send, a deferral, a
// reject). Bounces, complaints and unsubscribes come after. A queued
// event is a message of its own only until its call tries it (see
// Message).
func opens(t postroom.EventType) bool {
	return t == postroom.EventSend || t == postroom.EventDeferral || t == postroom.EventReject
}

// Message is the record of one message, as its events tell it: who sent
// it to whom, from which call, with what subject and templates, when it
// was first tried, where it stands, and its timeline. It never holds the
// body.
//
// A message is the events of one send id (a reject, which has none, is
// a message alone). A recipient of a queued call (package outbox) has a
// queued event first, with no send id: until the call tries it, that
// event is a message of its own, in StateQueued, with no send id; once
// an event of the same call and address is recorded, the queued event
// heads the timeline of that message (and of each later attempt, which
// has a send id of its own) and is no message of its own any longer.
type Message struct {
	// SendID is the message's send id; empty for a rejected message (the
	// suppression list stopped it before it was made) and a queued one.
	SendID string `json:"send_id,omitempty"`
	// AccountID is the account that sent it.
	AccountID string `json:"account_id"`
	// CallID is the id of the call that made it (postroom.Event.CallID);
	// empty for a message recorded before the events kept it.
	CallID string `json:"call_id,omitempty"`
	// Email is its recipient's address as the call named it.
	Email string `json:"email"`
	// From is its sender's address (postroom.Event.From).
	From string `json:"sender,omitempty"`
	// Subject is its rendered subject; empty when none was rendered (a
	// reject, a queued message, a failure before rendering).
	Subject string `json:"subject,omitempty"`
	// Templates are the ids of the stored templates it was made from,
	// html first (postroom.Event.HTMLTemplateID, TextTemplateID); none
	// for a call that gave its bodies.
	Templates []string `json:"templates,omitempty"`
	// List is its list id (postroom.Event.List), or "" for a
	// transactional message.
	List string `json:"list,omitempty"`
	// State is where it stands: the state of the latest event.
	State State `json:"state"`
	// Created is when its first attempt happened (its first send,
	// deferral or reject), or when it was queued for a message not tried
	// yet.
	Created time.Time `json:"created"`
	// Timeline is its events, oldest first: queued, each attempt
	// (deferral with its reason and reply, send, reject) and what came
	// back later (bounces with status and diagnostic, complaints,
	// unsubscribes).
	Timeline []postroom.Event `json:"timeline"`
}

// describe fills in g's call, sender, subject and templates from its
// timeline: for each, the first event that has it.
func (g *Message) describe() {
	g.CallID, g.From, g.Subject, g.Templates = "", "", "", nil
	var html, text string
	for i := range g.Timeline {
		e := &g.Timeline[i]
		g.CallID = cmp.Or(g.CallID, e.CallID)
		g.From = cmp.Or(g.From, e.From)
		g.Subject = cmp.Or(g.Subject, e.Subject)
		html, text = cmp.Or(html, e.HTMLTemplateID), cmp.Or(text, e.TextTemplateID)
	}
	for _, t := range []string{html, text} {
		if t != "" {
			g.Templates = append(g.Templates, t)
		}
	}
}

// Defaults and bounds of Query.Limit.
const (
	DefaultSearchLimit = 100
	MaxSearchLimit     = 1000
)

// Query selects messages of one account for Search. Each zero field
// selects every message.
type Query struct {
	// AccountID is the account whose messages are searched; required.
	AccountID string
	// Email selects the messages to this address, in any letter case.
	Email string
	// SendID selects the message of this send id (either letter case).
	SendID string
	// CallID selects the messages of this call (postroom.Event.CallID).
	CallID string
	// List selects the messages of this list id (in any letter case).
	List string
	// State selects the messages in this state.
	State State
	// From and To select the messages created at From or later and
	// before To.
	From, To time.Time
	// Limit is the most messages returned. Zero means
	// DefaultSearchLimit; more than MaxSearchLimit is cut to it.
	Limit int
	// Cursor is the next value of the previous page, or "" for the first.
	Cursor string
}

// ErrBadQuery is wrapped by the error of Search for a Query it refuses: no
// account, an unknown state, To before From. A cursor Search did not make
// is ErrBadCursor.
var ErrBadQuery = errors.New("events: bad query")

// check validates q and returns it with its limit set.
func (q Query) check() (Query, error) {
	switch {
	case q.AccountID == "":
		return q, fmt.Errorf("%w: no account", ErrBadQuery)
	case q.State != "" && len(eventsOf(q.State)) == 0:
		return q, fmt.Errorf("%w: unknown state %q", ErrBadQuery, q.State)
	case !q.From.IsZero() && !q.To.IsZero() && q.To.Before(q.From):
		return q, fmt.Errorf("%w: To is before From", ErrBadQuery)
	case q.Limit < 0:
		return q, fmt.Errorf("%w: negative limit", ErrBadQuery)
	}
	if q.Limit == 0 {
		q.Limit = DefaultSearchLimit
	}
	q.Limit = min(q.Limit, MaxSearchLimit)
	return q, nil
}

// Activity finds messages and their timelines: the record of what
// happened to each. Search returns the messages of q.AccountID that q
// selects, newest first (by Created), and the cursor of the next page
// ("" when there is none). Info returns the message of accountID whose
// send id is sendID, and false when the account has none. Both must be
// safe for concurrent use; ctx bounds them; an error means the store
// could not answer.
//
// Memory and SQL implement it.
type Activity interface {
	Search(ctx context.Context, q Query) ([]Message, string, error)
	Info(ctx context.Context, accountID, sendID string) (Message, bool, error)
}

var (
	_ Activity = (*Memory)(nil)
	_ Activity = (*SQL)(nil)
)

// searchCursor is the position after a message: its Created and a
// tie-breaker (a row id or a sequence number), as "UNIXNANO.N".
type searchCursor struct {
	at time.Time
	n  int64
}

func (c searchCursor) String() string {
	return strconv.FormatInt(c.at.UnixNano(), 10) + "." + strconv.FormatInt(c.n, 10)
}

// parseSearchCursor reads a cursor of Search; ok false is the first page.
func parseSearchCursor(s string) (c searchCursor, ok bool, err error) {
	if s == "" {
		return c, false, nil
	}
	a, b, found := strings.Cut(s, ".")
	ns, err1 := strconv.ParseInt(a, 10, 64)
	n, err2 := strconv.ParseInt(b, 10, 64)
	if !found || err1 != nil || err2 != nil || n < 0 {
		return c, false, fmt.Errorf("%w: %q", ErrBadCursor, s)
	}
	return searchCursor{at: time.Unix(0, ns), n: n}, true, nil
}
