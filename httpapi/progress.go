package httpapi

import (
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/postroom/postroom"
)

// ResultLog says how each recipient's result is logged while its call
// runs (see the package documentation, # Logging). The zero value logs at
// info level.
type ResultLog struct {
	// Off: the results are not logged as they complete; only those of a
	// call whose answer did not reach its client are, at its end.
	Off bool
	// Level is the records' level when not Off. A level the Logger does
	// not keep is as Off.
	Level slog.Level
}

// String is the level's name in lower case, or "off".
func (l ResultLog) String() string {
	if l.Off {
		return "off"
	}
	return strings.ToLower(l.Level.String())
}

// MarshalText returns String's text.
func (l ResultLog) MarshalText() ([]byte, error) { return []byte(l.String()), nil }

// UnmarshalText sets l from "off" or a level's name (debug, info, warn,
// error, in any case, as slog.Level reads them), so that a ResultLog can
// be a flag (flag.TextVar) or a configuration field.
func (l *ResultLog) UnmarshalText(text []byte) error {
	if string(text) == "off" {
		*l = ResultLog{Off: true}
		return nil
	}
	var level slog.Level
	if err := level.UnmarshalText(text); err != nil {
		return fmt.Errorf("httpapi: result log %q: want debug, info, warn, error or off", text)
	}
	*l = ResultLog{Level: level}
	return nil
}

// progress returns the per-call settings that log each recipient's result
// as soon as it is final: one record per recipient, "result", with the
// request's request_id, while the call runs. That way a client that goes
// away, or a server that dies, mid-call never leaves the sent set unknown.
// A record names its recipient by index in the call's recipients (with
// the status, reason and send id), not by address: whoever retries has the
// call's body, and the log of a call that went well holds no recipient's
// address. It says false when the records would
// be dropped (ResultLog.Off, or a level the log does not keep): the
// caller then logs the results of a call whose answer did not reach the
// client at its end (logResults).
//
// The Mailer calls OnResult from its workers, concurrently; slog's
// handlers are safe for that. A record is written before the worker takes
// its next recipient, so a slow log slows the call: the text handler on
// stderr takes a few microseconds a record.
func (h *Handler) progress(w http.ResponseWriter, r *http.Request) (postroom.RunOptions, bool) {
	level := h.opts.ResultLog.Level
	if h.opts.ResultLog.Off || !h.logger.Enabled(r.Context(), level) {
		return postroom.RunOptions{}, false
	}
	id := requestID(w)
	ctx := r.Context()
	return postroom.RunOptions{OnResult: func(i int, res postroom.Result) {
		h.logger.LogAttrs(ctx, level, "result",
			slog.String("request_id", id),
			slog.Int("index", i),
			slog.String("status", string(res.Status)),
			slog.String("reason", res.Reason),
			slog.String("send_id", res.SendID))
	}}, true
}

// requestID is the id of the request w answers, as its log record has it.
func requestID(w http.ResponseWriter) string {
	if lw, ok := w.(*logWriter); ok {
		return lw.id
	}
	return ""
}
