package httpapi

import (
	"context"
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
	"github.com/postroom/postroom/events"
	"github.com/postroom/postroom/idempotency"
	"github.com/postroom/postroom/option"
	"github.com/postroom/postroom/suppression"
	"github.com/postroom/postroom/templatestore"
)

// Paths of the endpoints the Handler serves.
const (
	SendPath         = "/api/1.0/message.send"
	SendTemplatePath = "/api/1.0/message.send_template"
	// CallsPath is the prefix of a call's status, CallsPath + id, served
	// with Options.Async.
	CallsPath = "/api/1.0/calls/"
)

// Defaults of Options' zero fields.
const (
	// DefaultMaxBodyBytes is the largest request body: the spec's largest
	// call, 25,000 recipients with their params, fits.
	DefaultMaxBodyBytes = 64 << 20
	// DefaultInflightBodies is how many of the largest bodies are in
	// flight at most when MaxInflightBytes is zero: it then means
	// DefaultInflightBodies × MaxBodyBytes (128 MiB with the default
	// MaxBodyBytes). At the worst a decoded call takes about ten times its
	// body (eight concurrent 56 MiB bodies of tiny param keys: 1.1 GB peak
	// RSS with this bound, 4.2 GB without).
	DefaultInflightBodies = 2
)

// Options configure a Handler. New validates and copies them; each field's
// zero value means its default.
type Options struct {
	// Logger receives one record per request and each recipient's result (see
	// the package documentation, # Logging), and the detail of every 500. Nil
	// discards every record (slog.New(slog.DiscardHandler)), as for every
	// Logger of the module (package option). Set it in production.
	Logger *slog.Logger

	// MaxBodyBytes is the largest request body, in bytes; a larger one is
	// answered 413 too_large. Zero means DefaultMaxBodyBytes (64 MiB).
	MaxBodyBytes int64

	// MaxInflightBytes bounds the bytes of request bodies whose calls are
	// in flight (read, decoded, being sent, or being answered); a body of
	// unknown length counts as MaxBodyBytes. A request past the bound is
	// answered 503 busy with Retry-After. Zero means DefaultInflightBodies
	// (two) times MaxBodyBytes; it must be at least MaxBodyBytes, or the
	// largest calls could never run.
	MaxInflightBytes int64

	// CallTimeout bounds each call, from the moment its request reaches
	// the Handler; the recipients not finished by then are deferred
	// (timeout) and the call is answered with its results. Set it below the
	// http.Server's WriteTimeout, less the time to write the answer, so
	// that a call too slow to finish still gets its results written. Zero
	// means no bound but the request's context.
	CallTimeout time.Duration

	// NoTemplateStore says that the Mailer has no Options.Templates: then
	// message.send_template is answered 501 not_configured, the server's
	// configuration error, rather than 400 unknown_template, the caller's.
	// False: both operations are served.
	NoTemplateStore bool

	// Idempotency keeps the calls made with an Idempotency-Key header (see
	// the package documentation, # Idempotency). Nil means a store in
	// memory (idempotency.NewMemory), which holds for one process only:
	// instances behind a load balancer share an idempotency.SQL.
	Idempotency idempotency.Store

	// MaxIdempotentCalls bounds the idempotent calls in flight; past it a
	// call is answered 503 busy with Retry-After at once. With a store in
	// a database, each such call holds a connection for its whole length:
	// keep the bound at half the pool or less, so that the template
	// lookups those calls make meanwhile still find a connection. Zero
	// means no bound.
	MaxIdempotentCalls int

	// ResultLog is how each recipient's result is logged as soon as it is
	// final. The zero value logs at info level.
	ResultLog ResultLog

	// PreviewPath, when not empty, is where the preview page (package
	// preview) is served, such as "/preview/": a call pasted there is
	// rendered for each recipient and never sent; its key is checked like
	// the API's. It must start and end with "/" and not be under /api/.
	// Put it behind the application's admin authentication, and route the
	// path to the Handler. Empty means no preview page.
	PreviewPath string

	// Async, when not nil, runs the calls of requests with the header
	// Prefer: respond-async later, outside the request, and serves their
	// status at CallsPath + id to the account's key (see Async and
	// KeyHeader); when it is also an
	// AsyncSteering, the Handler serves CallsListPath, CallsCancelPath and
	// CallsRetryPath too. Nil means every call runs while its request
	// waits.
	Async Async

	// Suppressions, when not nil, is the suppression list served at
	// RejectsAddPath, RejectsListPath and RejectsDeletePath (see the
	// package documentation, # Suppression list), with the keys of the
	// Mailer's Options.Auth: usually the list the Mailer consults
	// (postroom.Options.Suppressions). Nil means those paths answer 404
	// as unknown paths do.
	Suppressions suppression.List

	// Templates, when not nil, is the template store served at
	// TemplatesAddPath and the other templates paths (see the package
	// documentation, # Stored templates), with the keys of the Mailer's
	// Options.Auth: usually the store the Mailer reads
	// (postroom.Options.Templates). Nil means those paths answer 404 as
	// unknown paths do.
	Templates templatestore.Manager

	// Activity, when not nil, is the message activity served at
	// MessagesSearchPath and MessagesInfoPath, and, when it can read kept
	// bodies back, messages.content (see the package
	// documentation, # Message activity), with the keys of the Mailer's
	// Options.Auth: usually the events.SQL or events.Memory the Mailer's
	// Options.OnEvent feeds. Nil means those paths answer 404 as unknown
	// paths do.
	Activity events.Activity
}

// opNew is New's name in its *option.Error.
const opNew = "httpapi.New"

// setDefaults gives every zero field of o its default by the module's
// rule (package option): zero means the default, and a negative value is
// an *option.Error. A nil Logger discards. New calls it before any other
// check of the fields.
func (o *Options) setDefaults() error {
	if err := option.Default(opNew, "Options.MaxBodyBytes", &o.MaxBodyBytes, DefaultMaxBodyBytes); err != nil {
		return err
	}
	if err := option.Default(opNew, "Options.MaxInflightBytes", &o.MaxInflightBytes, DefaultInflightBodies*o.MaxBodyBytes); err != nil {
		return err
	}
	if err := option.Default(opNew, "Options.CallTimeout", &o.CallTimeout, 0); err != nil {
		return err
	}
	if err := option.Default(opNew, "Options.MaxIdempotentCalls", &o.MaxIdempotentCalls, 0); err != nil {
		return err
	}
	o.Logger = option.Logger(o.Logger)
	return nil
}

// Handler serves the spec's two endpoints over one Mailer (see the package
// documentation). It is safe for concurrent use; build it with New.
type Handler struct {
	opts     Options
	logger   *slog.Logger
	inflight *inflight
	idem     *idempotent
	mux      http.Handler
}

// New returns the Handler serving m's calls. It validates opts.
func New(m *postroom.Mailer, opts Options) (*Handler, error) {
	if m == nil {
		return nil, errors.New("httpapi: New: nil Mailer")
	}
	if err := opts.setDefaults(); err != nil {
		return nil, err
	}
	if opts.MaxInflightBytes < opts.MaxBodyBytes {
		return nil, option.Errorf(opNew, "Options.MaxInflightBytes", "is under MaxBodyBytes: the largest calls could never run")
	}
	if p := opts.PreviewPath; p != "" && (!strings.HasPrefix(p, "/") || !strings.HasSuffix(p, "/") || strings.HasPrefix(p, "/api/") || p == "/") {
		return nil, option.Errorf(opNew, "Options.PreviewPath", "%q is not a path such as /preview/, starting and ending with /, not under /api/", p)
	}
	idem, err := newIdempotent(opts.Idempotency, opts.MaxIdempotentCalls)
	if err != nil {
		return nil, err
	}
	h := &Handler{opts: opts, logger: opts.Logger, inflight: newInflight(opts.MaxInflightBytes, opts.MaxBodyBytes), idem: idem}
	sendTemplate := h.sender(m, postroom.OpSendTemplate)
	if opts.NoTemplateStore {
		sendTemplate = nil
	}
	mux := http.NewServeMux()
	mux.Handle(SendPath, h.endpoint(postroom.OpSend, h.sender(m, postroom.OpSend)))
	mux.Handle(SendTemplatePath, h.endpoint(postroom.OpSendTemplate, sendTemplate))
	if opts.Async != nil {
		steer, _ := opts.Async.(AsyncSteering)
		mux.Handle(CallsPath, h.callStatus(m, steer))
		if steer != nil {
			h.mountCalls(mux, m, steer)
		}
	}
	if opts.PreviewPath != "" {
		page, err := newPreview(m, opts)
		if err != nil {
			return nil, err
		}
		mux.Handle(opts.PreviewPath, page)
	}
	if opts.Suppressions != nil {
		h.mountRejects(mux, m, opts.Suppressions)
	}
	if opts.Templates != nil {
		h.mountTemplates(mux, m, opts.Templates)
	}
	if opts.Activity != nil {
		h.mountMessages(mux, m, opts.Activity)
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, &apiError{Code: "not_found", Message: "no such endpoint: " + r.URL.Path})
	})
	h.mux = logRequests(opts.Logger, mux)
	return h, nil
}

// ServeHTTP serves the endpoints, a JSON 404 for every other path, and logs
// a record per request.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mux.ServeHTTP(w, r)
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

// endpoint serves operation op, run by send (see sender); send is nil for
// an operation the Handler is not configured for.
func (h *Handler) endpoint(op postroom.Operation, send sendFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			writeError(w, http.StatusMethodNotAllowed, &apiError{Code: "method_not_allowed", Message: r.Method + " is not allowed: use POST"})
			return
		}
		if send == nil {
			logError(w, slog.LevelError, "message.send_template called, but the Mailer has no template store (Options.NoTemplateStore)")
			writeError(w, http.StatusNotImplemented, &apiError{Code: "not_configured", Message: "this server has no stored templates: message.send_template is not available"})
			return
		}
		if !isJSON(r.Header.Get("Content-Type")) {
			writeError(w, http.StatusUnsupportedMediaType, &apiError{Code: "unsupported_media_type", Message: "the body must be sent as Content-Type: application/json"})
			return
		}
		if r.ContentLength > h.opts.MaxBodyBytes {
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
		ctx, cancel := r.Context(), context.CancelFunc(func() {})
		if h.opts.CallTimeout > 0 {
			ctx, cancel = context.WithTimeout(ctx, h.opts.CallTimeout)
		}
		defer cancel()

		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.opts.MaxBodyBytes))
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
		// As the account endpoints do: a NUL or invalid UTF-8 in the
		// account is a 500 from any store in PostgreSQL (the outbox's,
		// the templates', the idempotency records', the suppression
		// list's), and NoAuth takes any account.
		if ve := checkAccount(call.AccountID); ve != nil {
			writeValidationError(w, ve)
			return
		}
		addLogAttrs(w, slog.String("account_id", call.AccountID), slog.Int("recipients", len(call.Recipients)))
		if h.opts.Async != nil && prefersAsync(r) {
			h.enqueue(ctx, w, r, op, call)
			return
		}

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
		addLogAttrs(w, slog.Any("statuses", postroom.CountStatuses(results)))
		if err := writeJSON(w, http.StatusOK, results); err != nil {
			// The client went away while the results were written.
			logError(w, slog.LevelWarn, "writing the results: "+err.Error())
			if !logged {
				h.logResults(w, r, results)
			}
		}
	}
}

// sendFunc runs one call of an endpoint for the request r, with the
// per-call settings o (the progress log's OnResult).
type sendFunc func(ctx context.Context, r *http.Request, call *postroom.Call, o postroom.RunOptions) ([]postroom.Result, error)

// sender returns the sendFunc of operation op: idempotency.RunWith with
// the request's Idempotency-Key when it has one, m.Run otherwise. It is
// the path of every call the Handler runs while its request waits.
func (h *Handler) sender(m *postroom.Mailer, op postroom.Operation) sendFunc {
	return func(ctx context.Context, r *http.Request, call *postroom.Call, o postroom.RunOptions) ([]postroom.Result, error) {
		key, err := idempotencyKey(r)
		switch {
		case err != nil:
			return nil, err
		case key == "":
			return m.Run(ctx, op, call, o)
		}
		h.idem.sweep(ctx, h.logger)
		return idempotency.RunWith(ctx, h.idem.store, m, key, op, call, o)
	}
}

// logResults logs every recipient's result of a call whose answer did not
// reach the client, one record each, tied to the request's record by its
// request id.
func (h *Handler) logResults(w http.ResponseWriter, r *http.Request, results []postroom.Result) {
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
