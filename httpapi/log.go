package httpapi

import (
	"crypto/rand"
	"log/slog"
	"net/http"
	"time"
)

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
