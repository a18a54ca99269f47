package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/idempotency"
)

// handler serves the spec's two endpoints over one Mailer. It is what an
// application that wraps postroom in its own HTTP server copies: decode the
// body into a postroom.Call, pass the request's context to the Mailer, and
// turn a call-level error into an honest HTTP status.
type handler struct {
	handlerOptions
	logger   *slog.Logger
	inflight *inflight
	idem     *idempotent
}

// handlerOptions configure a handler.
type handlerOptions struct {
	// MaxBody is the largest request body, in bytes.
	MaxBody int64
	// MaxInflight bounds the bytes of request bodies whose calls are in
	// flight (see inflight); at least MaxBody.
	MaxInflight int64
	// Budget is how long one call may take, from the moment its headers
	// are read: the server's write timeout less time to write the answer.
	Budget time.Duration
	// Templates says whether the Mailer has a template store. Without one,
	// message.send_template is a server configuration error (501), not the
	// client's unknown template.
	Templates bool
	// Idempotency keeps the calls made with an Idempotency-Key header; nil
	// means a store in memory (see idempotency.go).
	Idempotency idempotency.Store
	// ResultLog is how each recipient's result is logged as it completes
	// (see progress); the zero value logs at info level.
	ResultLog resultLog
}

// newHandler returns the API's handler: the two endpoints, a JSON 404 for
// every other path, and a log record per request.
func newHandler(m *postroom.Mailer, logger *slog.Logger, opts handlerOptions) http.Handler {
	h := &handler{handlerOptions: opts, logger: logger, inflight: newInflight(opts.MaxInflight, opts.MaxBody)}
	h.idem = newIdempotent(opts.Idempotency)
	sendTemplate := h.sender(m, postroom.OpSendTemplate)
	if !opts.Templates {
		sendTemplate = nil
	}
	mux := http.NewServeMux()
	mux.Handle("/api/1.0/message.send", h.endpoint(h.sender(m, postroom.OpSend)))
	mux.Handle("/api/1.0/message.send_template", h.endpoint(sendTemplate))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, &apiError{Code: "not_found", Message: "no such endpoint: " + r.URL.Path})
	})
	return logRequests(logger, mux)
}

// apiError is the body of every answer to a call that failed as a whole.
type apiError struct {
	Status  string `json:"status"` // always "error"
	Code    string `json:"code"`
	Message string `json:"message"`
	// Field is the offending field's path, such as "message.from_email".
	Field string `json:"field,omitempty"`
	// Fields lists every offending field when there are several; Field is
	// the first of them.
	Fields []string `json:"fields,omitempty"`
}

// endpoint serves one operation (see sender); nil for an operation the
// server is not configured for.
func (h *handler) endpoint(send sendFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			writeError(w, http.StatusMethodNotAllowed, &apiError{Code: "method_not_allowed", Message: r.Method + " is not allowed: use POST"})
			return
		}
		if send == nil {
			logError(w, slog.LevelError, "message.send_template called, but the server has no template store (-templates)")
			writeError(w, http.StatusNotImplemented, &apiError{Code: "not_configured", Message: "this server has no stored templates: message.send_template is not available"})
			return
		}
		if !isJSON(r.Header.Get("Content-Type")) {
			writeError(w, http.StatusUnsupportedMediaType, &apiError{Code: "unsupported_media_type", Message: "the body must be sent as Content-Type: application/json"})
			return
		}
		if r.ContentLength > h.MaxBody {
			writeError(w, http.StatusRequestEntityTooLarge, &apiError{Code: "too_large", Message: "the body is over the server's limit"})
			return
		}
		release, ok := h.inflight.acquire(r)
		if !ok {
			writeBusy(w)
			return
		}
		defer release()
		// The deadline starts now, as the server's write timeout does, so
		// that a call too slow to finish still gets its results written.
		ctx, cancel := context.WithTimeout(r.Context(), h.Budget)
		defer cancel()

		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.MaxBody))
		if tooLarge := (*http.MaxBytesError)(nil); errors.As(err, &tooLarge) {
			writeError(w, http.StatusRequestEntityTooLarge, &apiError{Code: "too_large", Message: "the body is over the server's limit"})
			return
		}
		if err != nil {
			// Too slow (the server's read timeout), or cut short; if the
			// client went away, nobody reads the answer.
			logError(w, slog.LevelWarn, "reading the body: "+err.Error())
			if ne := net.Error(nil); errors.As(err, &ne) && ne.Timeout() {
				writeError(w, http.StatusRequestTimeout, &apiError{Code: "timeout", Message: "the body was not received in time"})
				return
			}
			writeError(w, http.StatusBadRequest, &apiError{Code: "invalid_json", Message: "the body was cut short"})
			return
		}
		call, err := postroom.DecodeCall(body)
		if err != nil {
			e := &apiError{Code: "invalid_json", Message: "the body is not one JSON object"}
			if se := (*json.SyntaxError)(nil); errors.As(err, &se) {
				e.Message = fmt.Sprintf("the body is not valid JSON (at byte %d)", se.Offset)
			}
			if ve := (*postroom.ValidationError)(nil); errors.As(err, &ve) {
				e.Field, e.Message = ve.Field, ve.Field+": "+ve.Reason
			}
			writeError(w, http.StatusBadRequest, e)
			return
		}
		addLogAttrs(w, slog.String("account_id", call.AccountID), slog.Int("recipients", len(call.Recipients)))

		progress, logged := h.progress(w, r)
		results, err := send(ctx, r, call, progress)
		// The call's memory is free but for the results: let the next
		// call in before the answer is written, so that a client that
		// has its answer finds the bound free.
		release()
		switch {
		case r.Context().Err() != nil:
			// The client went away; what was sent was sent. Nobody reads
			// the answer, so the log keeps every recipient's result (none
			// if the call failed as a whole) for the operator to know who
			// must not be sent again: logged as they completed, or now.
			logError(w, slog.LevelWarn, "client went away: "+context.Cause(r.Context()).Error())
			if !logged {
				h.logResults(w, r, results)
			}
			return
		case err == nil:
		case results != nil && ctx.Err() != nil:
			// The call outlasted the budget; the recipients not finished
			// are deferred (timeout), which is safe to retry.
			logError(w, slog.LevelError, err.Error())
		case results != nil && errors.Is(err, postroom.ErrTransportUnusable):
			// The transport cannot deliver (say, the SMTP login is refused):
			// every recipient not handed over is deferred. Answer the
			// results; the operator finds the cause in the log.
			logError(w, slog.LevelError, err.Error())
		case results != nil && errors.Is(err, idempotency.ErrStore):
			// The results are right, the record of them may not be.
			logError(w, slog.LevelError, err.Error())
		default:
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
		addLogAttrs(w, slog.Any("statuses", countStatuses(results)))
		if err := writeJSON(w, http.StatusOK, results); err != nil {
			// The client went away while the results were written.
			logError(w, slog.LevelWarn, "writing the results: "+err.Error())
			if !logged {
				h.logResults(w, r, results)
			}
		}
	}
}

// logResults logs every recipient's result of a call whose answer did not
// reach the client, one record each, tied to the request's record by its
// request id.
func (h *handler) logResults(w http.ResponseWriter, r *http.Request, results []postroom.Result) {
	var id string
	if lw, ok := w.(*logWriter); ok {
		id = lw.id
	}
	for i, res := range results {
		h.logger.LogAttrs(r.Context(), slog.LevelWarn, "result not delivered to the client",
			slog.String("request_id", id),
			slog.Int("index", i),
			slog.String("email", res.Email),
			slog.String("status", string(res.Status)),
			slog.String("reason", res.Reason),
			slog.String("send_id", res.SendID))
	}
}

// isJSON reports whether a Content-Type is application/json, with no
// charset or charset=utf-8 (RFC 8259 §8.1: JSON is UTF-8).
func isJSON(contentType string) bool {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || mt != "application/json" {
		return false
	}
	cs, ok := params["charset"]
	return !ok || strings.EqualFold(cs, "utf-8")
}

// callError maps a call-level error of the Mailer to an HTTP status and
// body. Unexpected errors are 500 with no detail: the log has it.
func callError(err error) (int, *apiError) {
	switch {
	case errors.Is(err, postroom.ErrUnauthorized):
		return http.StatusUnauthorized, &apiError{Code: "invalid_key", Message: "the key is not valid for this account"}
	case errors.Is(err, postroom.ErrNoRecipients):
		return http.StatusBadRequest, &apiError{Code: "no_recipients", Message: "the call has no recipients", Field: "recipients"}
	case errors.Is(err, postroom.ErrTooManyRecipients):
		return http.StatusBadRequest, &apiError{Code: "too_many_recipients", Message: "the call has more recipients than the server takes in one call", Field: "recipients"}
	}
	ves := postroom.ValidationErrors(err)
	if ves == nil {
		return http.StatusInternalServerError, &apiError{Code: "internal", Message: "internal error"}
	}
	// The first unknown template, else the first template error, else the
	// first problem, names the code; all fields are listed.
	first, code := ves[0], "validation_error"
	for _, c := range []struct {
		target error
		code   string
	}{{postroom.ErrTemplateNotFound, "unknown_template"}, {postroom.ErrTemplateSyntax, "template_syntax"}} {
		if i := slices.IndexFunc(ves, func(ve *postroom.ValidationError) bool { return errors.Is(ve, c.target) }); i >= 0 {
			first, code = ves[i], c.code
			break
		}
	}
	e := &apiError{Code: code, Message: first.Field + ": " + first.Reason, Field: first.Field}
	if len(ves) > 1 {
		e.Fields = []string{first.Field}
		for _, ve := range ves {
			if ve != first {
				e.Fields = append(e.Fields, ve.Field)
			}
		}
	}
	return http.StatusBadRequest, e
}

func countStatuses(results []postroom.Result) map[postroom.Status]int {
	n := map[postroom.Status]int{}
	for _, r := range results {
		n[r.Status]++
	}
	return n
}

func writeError(w http.ResponseWriter, status int, e *apiError) {
	e.Status = "error"
	addLogAttrs(w, slog.String("code", e.Code))
	if e.Field != "" {
		addLogAttrs(w, slog.String("field", e.Field))
	}
	_ = writeJSON(w, status, e) // an error means the client is gone
}

// writeJSON writes v as the answer. An error means the client is gone: the
// answer did not reach it (as far as this side can tell).
func writeJSON(w http.ResponseWriter, status int, v any) error {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	if err := json.NewEncoder(w).Encode(v); err != nil {
		return err
	}
	return http.NewResponseController(w).Flush()
}

// logWriter records what the log record of a request needs.
type logWriter struct {
	http.ResponseWriter
	id     string // the request's, in its record and those of logResults
	status int
	bytes  int64
	attrs  []slog.Attr
	level  slog.Level // at least this
}

func (lw *logWriter) WriteHeader(status int) {
	if lw.status == 0 {
		lw.status = status
	}
	lw.ResponseWriter.WriteHeader(status)
}

func (lw *logWriter) Write(p []byte) (int, error) {
	if lw.status == 0 {
		lw.status = http.StatusOK
	}
	n, err := lw.ResponseWriter.Write(p)
	lw.bytes += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach the connection.
func (lw *logWriter) Unwrap() http.ResponseWriter { return lw.ResponseWriter }

// addLogAttrs adds attributes to the request's log record.
func addLogAttrs(w http.ResponseWriter, attrs ...slog.Attr) {
	if lw, ok := w.(*logWriter); ok {
		lw.attrs = append(lw.attrs, attrs...)
	}
}

// logError adds an error to the request's log record and raises its level.
func logError(w http.ResponseWriter, level slog.Level, msg string) {
	if lw, ok := w.(*logWriter); ok {
		lw.attrs = append(lw.attrs, slog.String("error", msg))
		lw.level = max(lw.level, level)
	}
}

// logRequests logs one record per request: never its body, headers or key.
func logRequests(logger *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		lw := &logWriter{ResponseWriter: w, id: rand.Text(), level: slog.LevelInfo}
		next.ServeHTTP(lw, r)
		level := lw.level
		if lw.status >= 500 {
			level = slog.LevelError
		}
		attrs := append([]slog.Attr{
			slog.String("request_id", lw.id),
			slog.String("method", r.Method),
			slog.String("path", r.URL.Path),
			slog.String("remote", r.RemoteAddr),
			slog.Int("status", lw.status),
			slog.Int64("bytes", lw.bytes),
			slog.Duration("elapsed", time.Since(start)),
		}, lw.attrs...)
		logger.LogAttrs(r.Context(), level, "request", attrs...)
	})
}
