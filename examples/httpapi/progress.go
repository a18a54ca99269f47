package main

import (
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/postroom/postroom"
)

// resultLog says how each recipient's result is logged while its call
// runs (-log-results). The zero value logs at info level.
type resultLog struct {
	Off   bool
	Level slog.Level
}

// String is the flag's value: a level's name, or "off".
func (l resultLog) String() string {
	if l.Off {
		return "off"
	}
	return strings.ToLower(l.Level.String())
}

// resultLogFlag adds -log-results to fs, setting *l.
func resultLogFlag(fs *flag.FlagSet, l *resultLog) {
	fs.Func("log-results", "log each recipient's result as soon as it is final, at `level` debug, info, warn or error; off: only a call whose client went away has its results logged, at its end (default info)", func(s string) error {
		if s == "off" {
			*l = resultLog{Off: true}
			return nil
		}
		var level slog.Level
		if err := level.UnmarshalText([]byte(s)); err != nil {
			return fmt.Errorf("want debug, info, warn, error or off")
		}
		*l = resultLog{Level: level}
		return nil
	})
}

// progress returns the per-call settings that log each recipient's result
// as soon as it is final: one record per recipient, "result", with the
// request's request_id, while the call runs. That way a client that goes
// away, or a server that dies, mid-call never leaves the sent set unknown.
// A record names its recipient by index in the call's recipients (with
// the status, reason and send id), not by address: whoever retries has the
// call's body, and the log of a call that went well holds no recipient's
// address. It says false when the records would
// be dropped (-log-results off, or a level the log does not keep): the
// caller then logs the results of a call whose answer did not reach the
// client at its end (logResults).
//
// The Mailer calls OnResult from its workers, concurrently; slog's
// handlers are safe for that. A record is written before the worker takes
// its next recipient, so a slow log slows the call: the text handler on
// stderr takes a few microseconds a record.
func (h *handler) progress(w http.ResponseWriter, r *http.Request) (postroom.RunOptions, bool) {
	level := h.ResultLog.Level
	if h.ResultLog.Off || !h.logger.Enabled(r.Context(), level) {
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
