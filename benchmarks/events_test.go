package benchmarks

import (
	"testing"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/events"
	"github.com/postroom/postroom/internal/testkit/bench"
	"github.com/postroom/postroom/internal/testkit/fixture"
	"github.com/postroom/postroom/internal/testkit/pgtest"
	"github.com/postroom/postroom/sqldb/pgxdb"
)

// BenchmarkPipelineRecorder is the 25,000-recipient pipeline (discarding
// transport) without events ("none") and with an events.Recorder on
// PostgreSQL as Options.OnEvent ("postgres"), flushed after each call:
// what recording every message's send event costs a call. Run it for a
// fixed count (-benchtime Nx): the log grows by 25,000 rows a call.
func BenchmarkPipelineRecorder(b *testing.B) {
	w := fixture.Shared(b)
	const n = 25000
	call := w.Call(n)
	run := func(b *testing.B, opts postroom.Options, flush func() error) {
		opts.Auth, opts.Concurrency = postroom.NoAuth{}, bench.Concurrency()
		m, err := postroom.New(bench.Discard(), opts)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		cpu := bench.MeasureCPU()
		for b.Loop() {
			results, err := m.Send(b.Context(), call)
			if err != nil {
				b.Fatal(err)
			}
			if len(results) != n || results[n-1].Status != postroom.StatusSent {
				b.Fatalf("results: %d, last %+v", len(results), results[n-1])
			}
			if err := flush(); err != nil {
				b.Fatal(err)
			}
		}
		cpu(b, n, "cpu-ns/recipient")
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e6, "ms/call")
	}
	b.Run("none", func(b *testing.B) { run(b, postroom.Options{}, func() error { return nil }) })
	b.Run("postgres", func(b *testing.B) {
		db := pgxdb.New(pgtest.NewPool(b))
		if err := events.Migrate(b.Context(), db); err != nil {
			b.Fatal(err)
		}
		s, err := events.NewSQL(db, events.SQLOptions{})
		if err != nil {
			b.Fatal(err)
		}
		rec, err := s.NewRecorder(events.RecorderOptions{FlushAfter: time.Hour})
		if err != nil {
			b.Fatal(err)
		}
		run(b, postroom.Options{OnEvent: rec.OnEvent}, func() error { return rec.Flush(b.Context()) })
	})
}
