package benchmarks

import (
	"io"
	"log/slog"
	"testing"

	"github.com/postroom/postroom/internal/bench"
	"github.com/postroom/postroom/internal/fixture"
)

// BenchmarkPipelineOnResult is the 25,000-recipient pipeline without and
// with a progress callback (RunOptions.OnResult appending to a
// mutex-guarded slice).
func BenchmarkPipelineOnResult(b *testing.B) {
	w := fixture.Shared(b)
	const n = 25000
	b.Run("none", func(b *testing.B) { bench.PipelinePostroom(b, w, n) })
	b.Run("collect", func(b *testing.B) { bench.PipelineOnResult(b, w, n) })
}

// BenchmarkSMTPLogging is transport.SMTP with its Logger silent (nil),
// at info level and at debug level (the protocol trace), both through a
// TextHandler into io.Discard.
func BenchmarkSMTPLogging(b *testing.B) {
	w := fixture.Shared(b)
	for _, l := range []struct {
		name   string
		logger *slog.Logger
	}{
		{"silent", nil},
		{"info", slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo}))},
		{"debug", slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelDebug}))},
	} {
		b.Run(l.name, func(b *testing.B) { bench.SMTPLogging(b, w, l.logger) })
	}
}
