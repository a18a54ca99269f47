package inbound

import (
	"context"
	"log/slog"
	"testing"
	"time"
)

// records is an slog.Handler keeping what reaches it.
type records struct{ recs *[]slog.Record }

func (h records) Enabled(context.Context, slog.Level) bool { return true }
func (h records) Handle(_ context.Context, r slog.Record) error {
	*h.recs = append(*h.recs, r.Clone())
	return nil
}
func (h records) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h records) WithGroup(string) slog.Handler      { return h }

func suppressedOf(r slog.Record) int64 {
	var n int64
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "suppressed" {
			n = a.Value.Int64()
		}
		return true
	})
	return n
}

// TestRepeatLimiter: at most max lines of one level and message per
// interval, whatever their attributes and across WithAttrs; other
// messages are counted apart; the first line of the next interval
// carries how many were left out.
func TestRepeatLimiter(t *testing.T) {
	var got []slog.Record
	l := slog.New(newRepeatLimiter(records{&got}, 3, time.Minute))
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	at := func(lg *slog.Logger, d time.Duration, level slog.Level, msg string, args ...any) {
		r := slog.NewRecord(t0.Add(d), level, msg, 0)
		r.Add(args...)
		lg.Handler().Handle(context.Background(), r)
	}
	for i := range 10 {
		at(l.With("rcpt", i), time.Duration(i)*time.Second, slog.LevelInfo, "unknown send id", "send_id", i)
	}
	at(l, 20*time.Second, slog.LevelInfo, "another line")
	at(l, 21*time.Second, slog.LevelWarn, "unknown send id")
	if len(got) != 5 {
		t.Fatalf("%d lines written in the first minute, want 3 + 1 + 1", len(got))
	}
	for _, r := range got {
		if n := suppressedOf(r); n != 0 {
			t.Errorf("%q carries suppressed=%d in the first minute", r.Message, n)
		}
	}
	at(l, time.Minute, slog.LevelInfo, "unknown send id")
	last := got[len(got)-1]
	if len(got) != 6 || last.Message != "unknown send id" || suppressedOf(last) != 7 {
		t.Errorf("the next minute's first line: %d lines, %q suppressed=%d; want a 6th with suppressed=7", len(got), last.Message, suppressedOf(last))
	}
}
