package benchmarks

import (
	"io"
	"log/slog"
	"sync"
	"testing"

	"github.com/postroom/postroom"

	"github.com/postroom/postroom/internal/testkit/bench"
	"github.com/postroom/postroom/internal/testkit/fixture"
)

// BenchmarkPipelineOnResult is the 25,000-recipient pipeline through
// Mailer.Run without and with a progress callback (RunOptions.OnResult
// appending to a mutex-guarded slice).
func BenchmarkPipelineOnResult(b *testing.B) {
	w := fixture.Shared(b)
	const n = 25000
	b.Run("none", func(b *testing.B) { bench.PipelineOnResult(b, w, n, false) })
	b.Run("collect", func(b *testing.B) { bench.PipelineOnResult(b, w, n, true) })
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

// BenchmarkCollector is the callback of BenchmarkPipelineOnResult alone:
// 8 goroutines, as the pipeline's workers, each handing it 1,000 results
// per iteration. ns/result is what the callback adds to a recipient's
// path when the workers contend for its mutex.
func BenchmarkCollector(b *testing.B) {
	const workers, per = 8, 1000
	var r postroom.Result
	b.ReportAllocs()
	for b.Loop() {
		c := bench.NewCollector(workers * per)
		var wg sync.WaitGroup
		for range workers {
			wg.Go(func() {
				for i := range per {
					c.OnResult(i, r)
				}
			})
		}
		wg.Wait()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*workers*per), "ns/result")
}
