package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/accountid"
	"github.com/postroom/postroom/suppression"
)

// Paths of the suppression list's endpoints, served with
// Options.Suppressions.
const (
	RejectsAddPath    = "/api/1.0/rejects.add"
	RejectsListPath   = "/api/1.0/rejects.list"
	RejectsDeletePath = "/api/1.0/rejects.delete"
)

// NextCursorHeader is the header of a rejects.list answer that has a next
// page: its value, given as "cursor" in the next request, asks for it.
const NextCursorHeader = "Postroom-Next-Cursor"

// maxRejectsBody is the largest body of the rejects endpoints: an address,
// a comment and a cursor.
const maxRejectsBody = 64 << 10

// rejectsAuth is the part of every rejects request that says who asks.
type rejectsAuth struct {
	Key       string `json:"key"`
	AccountID string `json:"account_id"`
}

// rejectsScope is the scope of an entry in an answer, beside Mandrill's
// fields: which of the address's mail it silences, "all" (every message),
// "lists" (every list message) or "list" (the messages of "list", a
// List-Id's list id). Requests take the same two fields, optional (see
// each endpoint), as fields of their own: a decoding error names the
// field alone.
type rejectsScope struct {
	Scope string `json:"scope,omitempty"`
	List  string `json:"list,omitempty"`
}

// rejectsAddRequest is the body of rejects.add.
type rejectsAddRequest struct {
	rejectsAuth
	Email   string `json:"email"`
	Comment string `json:"comment"`
	Scope   string `json:"scope"`
	List    string `json:"list"`
}

// rejectsAddAnswer is the answer of rejects.add, as Mandrill's, with the
// entry's scope (and list).
type rejectsAddAnswer struct {
	Email string `json:"email"`
	Added bool   `json:"added"`
	rejectsScope
}

// rejectsListRequest is the body of rejects.list.
type rejectsListRequest struct {
	rejectsAuth
	Email          string `json:"email"` // an address prefix
	Reason         string `json:"reason"`
	IncludeExpired bool   `json:"include_expired"`
	Limit          int    `json:"limit"`
	Cursor         string `json:"cursor"`
	Scope          string `json:"scope"`
	List           string `json:"list"`
}

// rejectsEntry is one entry of rejects.list's answer, as Mandrill's, with
// its scope ("list" for a list's entry alone).
type rejectsEntry struct {
	Email     string     `json:"email"`
	Reason    string     `json:"reason"`
	Detail    string     `json:"detail"`
	SendID    string     `json:"send_id,omitempty"`
	CreatedAt time.Time  `json:"created_at"`
	ExpiresAt *time.Time `json:"expires_at"` // null: never
	Expired   bool       `json:"expired"`
	Scope     string     `json:"scope"`
	List      string     `json:"list,omitempty"`
}

// rejectsDeleteRequest is the body of rejects.delete.
type rejectsDeleteRequest struct {
	rejectsAuth
	Email string `json:"email"`
	Scope string `json:"scope"`
	List  string `json:"list"`
}

// rejectsDeleteAnswer is the answer of rejects.delete, as Mandrill's, with
// the scope asked for (none: every entry of the address).
type rejectsDeleteAnswer struct {
	Email   string `json:"email"`
	Deleted bool   `json:"deleted"`
	rejectsScope
}

// mountRejects serves the rejects endpoints on mux over list, with the
// keys of m's Options.Auth.
func (h *Handler) mountRejects(mux *http.ServeMux, m *postroom.Mailer, list suppression.List) {
	mux.Handle(RejectsAddPath, authEndpoint(m, "rejects.add", func(ctx context.Context, w http.ResponseWriter, req *rejectsAddRequest) (any, error) {
		e, err := list.Add(ctx, suppression.Entry{AccountID: req.AccountID, Address: req.Email, Reason: postroom.ReasonManual, Detail: req.Comment,
			Scope: postroom.Scope(req.Scope), List: req.List})
		if err != nil {
			return nil, err
		}
		return rejectsAddAnswer{Email: e.Address, Added: true, rejectsScope: rejectsScope{Scope: string(e.Scope), List: e.List}}, nil
	}))
	mux.Handle(RejectsListPath, authEndpoint(m, "rejects.list", func(ctx context.Context, w http.ResponseWriter, req *rejectsListRequest) (any, error) {
		page, next, err := list.List(ctx, suppression.Query{AccountID: req.AccountID, Reason: postroom.ReasonCode(req.Reason), Prefix: req.Email,
			Scope: postroom.Scope(req.Scope), List: req.List, IncludeExpired: req.IncludeExpired, Limit: req.Limit, Cursor: req.Cursor})
		if err != nil {
			return nil, err
		}
		if next != "" {
			w.Header().Set(NextCursorHeader, next)
		}
		now := time.Now()
		out := make([]rejectsEntry, len(page))
		for i, e := range page {
			out[i] = rejectsEntry{Email: e.Address, Reason: string(e.Reason), Detail: e.Detail, SendID: e.SendID, CreatedAt: e.Created, Expired: !e.Active(now),
				Scope: string(e.Scope), List: e.List}
			if !e.Expires.IsZero() {
				out[i].ExpiresAt = &page[i].Expires
			}
		}
		return out, nil
	}))
	mux.Handle(RejectsDeletePath, authEndpoint(m, "rejects.delete", func(ctx context.Context, w http.ResponseWriter, req *rejectsDeleteRequest) (any, error) {
		deleted, err := list.Delete(ctx, req.AccountID, req.Email, postroom.Scope(req.Scope), req.List)
		if err != nil {
			return nil, err
		}
		return rejectsDeleteAnswer{Email: req.Email, Deleted: deleted, rejectsScope: rejectsScope{Scope: req.Scope, List: req.List}}, nil
	}))
}

// authEndpoint serves one endpoint of an account's own data (the rejects
// and calls endpoints), named name in the log, as accountEndpoint does,
// with bodies of at most maxRejectsBody. An error of run that wraps
// postroom.ErrCallNotFound is a 404, a *postroom.ValidationError a 400,
// any other a 500.
func authEndpoint[Req any, PReq interface {
	*Req
	auth() rejectsAuth
}](m *postroom.Mailer, name string, run func(ctx context.Context, w http.ResponseWriter, req PReq) (any, error)) http.HandlerFunc {
	return accountEndpoint(m, maxRejectsBody, run, func(w http.ResponseWriter, err error) {
		var ve *postroom.ValidationError
		if errors.As(err, &ve) {
			writeValidationError(w, ve)
			return
		}
		if errors.Is(err, postroom.ErrCallNotFound) {
			writeError(w, http.StatusNotFound, &apiError{Code: "not_found", Message: "no such call in this account"})
			return
		}
		logError(w, slog.LevelError, fmt.Sprintf("%s: %v", name, err))
		writeError(w, http.StatusInternalServerError, &apiError{Code: "internal", Message: "internal error"})
	})
}

// accountEndpoint serves one endpoint of an account's own data: a POST
// of a JSON body of at most maxBody bytes, decoded strictly into a *Req,
// authenticated with the account's key, then run; an error of run is
// answered by fail, an answer as JSON. An account_id over 255 bytes, not
// UTF-8 or holding a control character (a NUL) is refused first, 400
// naming the field, whatever the Authenticator (NoAuth takes any).
func accountEndpoint[Req any, PReq interface {
	*Req
	auth() rejectsAuth
}](m *postroom.Mailer, maxBody int64, run func(ctx context.Context, w http.ResponseWriter, req PReq) (any, error), fail func(w http.ResponseWriter, err error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			writeError(w, http.StatusMethodNotAllowed, &apiError{Code: "method_not_allowed", Message: r.Method + " is not allowed: use POST"})
			return
		}
		if !isJSON(r.Header.Get("Content-Type")) {
			writeError(w, http.StatusUnsupportedMediaType, &apiError{Code: "unsupported_media_type", Message: "the body must be sent as Content-Type: application/json"})
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
		if tooLarge := (*http.MaxBytesError)(nil); errors.As(err, &tooLarge) {
			writeError(w, http.StatusRequestEntityTooLarge, &apiError{Code: "too_large", Message: "the body is over the server's limit"})
			return
		}
		if err != nil {
			logError(w, slog.LevelWarn, "reading the body: "+err.Error())
			writeError(w, http.StatusBadRequest, &apiError{Code: "invalid_json", Message: "the body was cut short"})
			return
		}
		req := PReq(new(Req))
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.DisallowUnknownFields()
		if err := dec.Decode(req); err != nil || dec.More() {
			e := &apiError{Code: "invalid_json", Message: "the body is not one JSON object of this endpoint's fields: key, account_id and its own"}
			var se *json.SyntaxError
			var te *json.UnmarshalTypeError
			switch {
			case errors.As(err, &se):
				e.Message = fmt.Sprintf("the body is not valid JSON (at byte %d)", se.Offset)
			case errors.As(err, &te) && te.Field != "":
				e.Field, e.Message = te.Field, te.Field+": a "+te.Value+" where the endpoint takes a "+te.Type.String()
			}
			writeError(w, http.StatusBadRequest, e)
			return
		}
		a := req.auth()
		// Refused before the Authenticator or a store sees it: a NUL or
		// invalid UTF-8 is a database error (a 500) in PostgreSQL's text.
		if ve := checkAccount(a.AccountID); ve != nil {
			writeValidationError(w, ve)
			return
		}
		addLogAttrs(w, slog.String("account_id", a.AccountID))
		ctx := r.Context()
		if err := m.Authenticate(ctx, a.AccountID, a.Key); err != nil {
			status, e := callError(err)
			if status == http.StatusInternalServerError {
				logError(w, slog.LevelError, err.Error())
			}
			writeError(w, status, e)
			return
		}
		answer, err := run(ctx, w, req)
		if err != nil {
			fail(w, err)
			return
		}
		if err := writeJSON(w, http.StatusOK, answer); err != nil {
			logError(w, slog.LevelWarn, "writing the answer: "+err.Error())
		}
	}
}

func (a *rejectsAuth) auth() rejectsAuth { return *a }

// checkAccount refuses an account_id over 255 bytes, not UTF-8 or
// holding a control character (internal/accountid), as the Mailer and
// package suppression do, or returns nil.
func checkAccount(id string) *postroom.ValidationError {
	if r := accountid.Check(id); r != "" {
		return &postroom.ValidationError{Field: "account_id", Reason: r}
	}
	return nil
}

// writeValidationError answers ve: 400 validation_error naming its field.
func writeValidationError(w http.ResponseWriter, ve *postroom.ValidationError) {
	writeError(w, http.StatusBadRequest, &apiError{Code: "validation_error", Message: ve.Field + ": " + ve.Reason, Field: ve.Field})
}
