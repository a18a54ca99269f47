package inbound

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// maxRepeatKeys bounds the messages a repeatLimiter counts at once; when
// more come, the counts of messages whose minute is over are dropped
// first, then all of them.
const maxRepeatKeys = 1024

// repeatLimiter is an slog.Handler that writes at most max records with
// the same level and message per interval, whatever their attributes (a
// flood of unknown send ids or of timeouts gives a few lines a minute,
// not one per report). The first record written in a new interval
// carries the count of those left out in the previous one as the
// attribute "suppressed". Handlers made by WithAttrs and WithGroup share
// the counts.
type repeatLimiter struct {
	h  slog.Handler
	st *repeatCounts
}

type repeatCounts struct {
	max   int
	every time.Duration

	mu   sync.Mutex
	seen map[repeatKey]*repeatCount
}

type repeatKey struct {
	level slog.Level
	msg   string
}

type repeatCount struct {
	start      time.Time
	n          int // written since start
	suppressed int // left out since start
}

func newRepeatLimiter(h slog.Handler, max int, every time.Duration) *repeatLimiter {
	return &repeatLimiter{h: h, st: &repeatCounts{max: max, every: every, seen: make(map[repeatKey]*repeatCount)}}
}

func (l *repeatLimiter) Enabled(ctx context.Context, level slog.Level) bool {
	return l.h.Enabled(ctx, level)
}

func (l *repeatLimiter) Handle(ctx context.Context, r slog.Record) error {
	now := r.Time
	if now.IsZero() {
		now = time.Now()
	}
	ok, suppressed := l.st.admit(repeatKey{r.Level, r.Message}, now)
	if !ok {
		return nil
	}
	if suppressed > 0 {
		r = r.Clone()
		r.AddAttrs(slog.Int("suppressed", suppressed))
	}
	return l.h.Handle(ctx, r)
}

func (l *repeatLimiter) WithAttrs(as []slog.Attr) slog.Handler {
	return &repeatLimiter{h: l.h.WithAttrs(as), st: l.st}
}

func (l *repeatLimiter) WithGroup(name string) slog.Handler {
	return &repeatLimiter{h: l.h.WithGroup(name), st: l.st}
}

// admit says whether a record of k at now is written, and how many of k
// were left out in the interval before, when it is the first of a new
// one.
func (s *repeatCounts) admit(k repeatKey, now time.Time) (ok bool, suppressed int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.seen[k]
	if c == nil {
		if len(s.seen) >= maxRepeatKeys {
			s.forget(now)
		}
		c = &repeatCount{start: now}
		s.seen[k] = c
	}
	if now.Sub(c.start) >= s.every || now.Before(c.start) {
		suppressed = c.suppressed
		*c = repeatCount{start: now}
	}
	if c.n >= s.max {
		c.suppressed++
		return false, 0
	}
	c.n++
	return true, suppressed
}

// forget drops the counts whose interval is over, or all of them when
// none is (their suppressed lines are then not reported).
func (s *repeatCounts) forget(now time.Time) {
	for k, c := range s.seen {
		if now.Sub(c.start) >= s.every && c.suppressed == 0 {
			delete(s.seen, k)
		}
	}
	if len(s.seen) >= maxRepeatKeys {
		clear(s.seen)
	}
}
