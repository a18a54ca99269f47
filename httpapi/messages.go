package httpapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/events"
)

// Paths of the message activity's endpoints, served with
// Options.Activity.
const (
	MessagesSearchPath = "/api/1.0/messages.search"
	MessagesInfoPath   = "/api/1.0/messages.info"
	// MessagesContentPath answers a message's rendered body when the
	// store keeps it (events.SQLOptions.KeepBodies,
	// events.MemoryOptions.KeepBodies, with events.KeepBodies around the
	// transport), and is served only when Options.Activity is a
	// BodyReader.
	MessagesContentPath = "/api/1.0/messages.content"
)

// BodyReader is an Activity that returns a message's kept body, as
// events.SQL and events.Memory do (see events.KeepBodies).
type BodyReader interface {
	Body(ctx context.Context, accountID, sendID string) ([]byte, bool, error)
}

// messageContent is the answer of messages.content: the send id ("_id")
// and the complete rendered message as it left ("raw_msg", Mandrill's
// name), not parsed into its parts.
type messageContent struct {
	ID     string `json:"_id"`
	RawMsg string `json:"raw_msg"`
}

// errMessageNotFound: messages.info found no such message in the
// account, or messages.content no body kept of it.
var errMessageNotFound = errors.New("httpapi: no such message")

// messagesSearchRequest is the body of messages.search. Mandrill's
// "query" (a search expression) is not taken: each criterion is a field.
type messagesSearchRequest struct {
	rejectsAuth
	Email    string `json:"email"`
	SendID   string `json:"send_id"`
	CallID   string `json:"call_id"`
	List     string `json:"list"`
	State    string `json:"state"`
	DateFrom string `json:"date_from"`
	DateTo   string `json:"date_to"`
	Limit    int    `json:"limit"`
	Cursor   string `json:"cursor"`
}

// messagesInfoRequest is the body of messages.info: Mandrill's "id", a
// send id.
type messagesInfoRequest struct {
	rejectsAuth
	ID string `json:"id"`
}

// messageEntry is a message in an answer, with Mandrill's field names
// where they mean the same: "_id" (the send id; empty for a rejected
// message, which was never made, and a queued one, not made yet), "ts"
// (when it was first tried, or queued, Unix seconds), "state", "email",
// "sender", "subject" (rendered; empty when none was), "template" (the
// stored template it was made from, its html one when it had both, or
// null), "smtp_events" (its attempts: each send and deferral, with the
// reply as "diag"); with its "call_id", "templates" (every template id),
// "list" and its whole "timeline" (postroom.Event values, oldest first)
// beside them.
type messageEntry struct {
	ID         string           `json:"_id"`
	TS         int64            `json:"ts"`
	State      string           `json:"state"`
	Email      string           `json:"email"`
	Sender     string           `json:"sender"`
	Subject    string           `json:"subject"`
	Template   *string          `json:"template"`
	CallID     string           `json:"call_id,omitempty"`
	Templates  []string         `json:"templates,omitempty"`
	List       string           `json:"list,omitempty"`
	SMTPEvents []smtpEvent      `json:"smtp_events"`
	Timeline   []postroom.Event `json:"timeline"`
}

// smtpEvent is one attempt of a message, as Mandrill's smtp_events: when
// (Unix seconds), "sent" or "deferred", and the reply.
type smtpEvent struct {
	TS   int64  `json:"ts"`
	Type string `json:"type"`
	Diag string `json:"diag"`
}

// entryOf is the answer's form of g.
func entryOf(g events.Message) messageEntry {
	e := messageEntry{ID: g.SendID, TS: g.Created.Unix(), State: string(g.State), Email: g.Email, Sender: g.From, Subject: g.Subject,
		CallID: g.CallID, Templates: g.Templates, List: g.List, SMTPEvents: []smtpEvent{}, Timeline: g.Timeline}
	if len(g.Templates) > 0 {
		e.Template = &g.Templates[0]
	}
	if e.Timeline == nil {
		e.Timeline = []postroom.Event{}
	}
	for _, ev := range g.Timeline {
		switch ev.Type {
		case postroom.EventSend:
			e.SMTPEvents = append(e.SMTPEvents, smtpEvent{TS: ev.At.Unix(), Type: string(events.StateSent), Diag: ev.Diagnostic})
		case postroom.EventDeferral:
			e.SMTPEvents = append(e.SMTPEvents, smtpEvent{TS: ev.At.Unix(), Type: string(events.StateDeferred), Diag: ev.Diagnostic})
		}
	}
	return e
}

// mountMessages serves the message activity's endpoints on mux over a,
// with the keys of m's Options.Auth.
func (h *Handler) mountMessages(mux *http.ServeMux, m *postroom.Mailer, a events.Activity) {
	mux.Handle(MessagesSearchPath, messagesEndpoint(m, "messages.search", func(ctx context.Context, w http.ResponseWriter, req *messagesSearchRequest) (any, error) {
		q, err := req.query()
		if err != nil {
			return nil, err
		}
		page, next, err := a.Search(ctx, q)
		if errors.Is(err, events.ErrBadCursor) {
			return nil, &postroom.ValidationError{Field: "cursor", Reason: "not a cursor of this endpoint"}
		}
		if err != nil {
			return nil, err
		}
		if next != "" {
			w.Header().Set(NextCursorHeader, next)
		}
		out := make([]messageEntry, len(page))
		for i, g := range page {
			out[i] = entryOf(g)
		}
		return out, nil
	}))
	mux.Handle(MessagesInfoPath, messagesEndpoint(m, "messages.info", func(ctx context.Context, w http.ResponseWriter, req *messagesInfoRequest) (any, error) {
		if req.ID == "" {
			return nil, &postroom.ValidationError{Field: "id", Reason: "required"}
		}
		g, ok, err := a.Info(ctx, req.AccountID, req.ID)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, errMessageNotFound
		}
		return entryOf(g), nil
	}))
	br, ok := a.(BodyReader)
	if !ok {
		return
	}
	mux.Handle(MessagesContentPath, messagesEndpoint(m, "messages.content", func(ctx context.Context, w http.ResponseWriter, req *messagesInfoRequest) (any, error) {
		if req.ID == "" {
			return nil, &postroom.ValidationError{Field: "id", Reason: "required"}
		}
		body, ok, err := br.Body(ctx, req.AccountID, req.ID)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, errMessageNotFound
		}
		return messageContent{ID: req.ID, RawMsg: string(body)}, nil
	}))
}

// query is the events.Query of r, or a *postroom.ValidationError naming
// the field it refuses.
func (r *messagesSearchRequest) query() (events.Query, error) {
	q := events.Query{AccountID: r.AccountID, Email: r.Email, SendID: r.SendID, CallID: r.CallID, List: r.List, State: events.State(r.State), Limit: r.Limit, Cursor: r.Cursor}
	switch q.State {
	case "", events.StateSent, events.StateDeferred, events.StateRejected, events.StateBounced, events.StateSoftBounced, events.StateSpam, events.StateUnsub, events.StateQueued:
	default:
		return q, &postroom.ValidationError{Field: "state", Reason: fmt.Sprintf("unknown state %q: want queued, sent, deferred, rejected, bounced, soft-bounced, spam or unsub", r.State)}
	}
	if r.Limit < 0 {
		return q, &postroom.ValidationError{Field: "limit", Reason: "negative"}
	}
	var err error
	if q.From, err = parseDate(r.DateFrom, false); err != nil {
		return q, &postroom.ValidationError{Field: "date_from", Reason: err.Error()}
	}
	if q.To, err = parseDate(r.DateTo, true); err != nil {
		return q, &postroom.ValidationError{Field: "date_to", Reason: err.Error()}
	}
	if !q.From.IsZero() && !q.To.IsZero() && q.To.Before(q.From) {
		return q, &postroom.ValidationError{Field: "date_to", Reason: "before date_from"}
	}
	return q, nil
}

// parseDate reads a date of messages.search: "" (none), an RFC 3339 time,
// or Mandrill's YYYY-MM-DD (UTC), which as the end of a range (end) takes
// in the whole day.
func parseDate(s string, end bool) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		if end {
			t = t.AddDate(0, 0, 1)
		}
		return t, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is neither YYYY-MM-DD nor an RFC 3339 time", s)
	}
	return t, nil
}

// messagesEndpoint serves one endpoint of the message activity, named
// name in the log, as accountEndpoint does: a *postroom.ValidationError
// of run is a 400, errMessageNotFound a 404, any other error a 500.
func messagesEndpoint[Req any, PReq interface {
	*Req
	auth() rejectsAuth
}](m *postroom.Mailer, name string, run func(ctx context.Context, w http.ResponseWriter, req PReq) (any, error)) http.HandlerFunc {
	return accountEndpoint(m, maxRejectsBody, run, func(w http.ResponseWriter, err error) {
		var ve *postroom.ValidationError
		switch {
		case errors.As(err, &ve):
			writeValidationError(w, ve)
		case errors.Is(err, errMessageNotFound):
			writeError(w, http.StatusNotFound, &apiError{Code: "not_found", Message: "no such message in this account"})
		default:
			logError(w, slog.LevelError, fmt.Sprintf("%s: %v", name, err))
			writeError(w, http.StatusInternalServerError, &apiError{Code: "internal", Message: "internal error"})
		}
	})
}
