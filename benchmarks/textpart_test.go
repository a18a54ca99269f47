//go:build unix

package benchmarks

import (
	"bytes"
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/bench"
	"github.com/postroom/postroom/internal/fixture"
)

// BenchmarkPipelineHTMLOnly is the pipeline of the largest call size on the
// workload's call without its text part, the default for a call that gives
// html only: every recipient's text/plain alternative is generated from its
// rendered html (internal/htmltext). Set against BenchmarkPipeline's
// postroom row, it is the cost of the generated text part. Besides
// ns/recipient it reports cpu-ns/recipient, the process's CPU time (user
// and system, every thread) per recipient, which a busy machine inflates
// less than wall time.
func BenchmarkPipelineHTMLOnly(b *testing.B) {
	w := fixture.Shared(b)
	n := pipelineSizes[len(pipelineSizes)-1]
	b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
		checkGeneratesText(b, w)
		call := w.Call(n)
		call.Message.Text = ""
		mailer, err := bench.NewMailer(bench.Discard(), bench.Concurrency())
		if err != nil {
			b.Fatal(err)
		}
		ctx := b.Context()
		b.ReportAllocs()
		cpu0 := processCPU(b)
		for b.Loop() {
			if err := bench.SendAll(ctx, mailer, call); err != nil {
				b.Fatal(err)
			}
		}
		cpu := processCPU(b) - cpu0
		recipients := float64(b.N) * float64(n)
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/recipients, "ns/recipient")
		b.ReportMetric(float64(cpu.Nanoseconds())/recipients, "cpu-ns/recipient")
	})
}

// checkGeneratesText fails b unless the workload's call without its text
// gets a generated text/plain part: the benchmark measures that part.
func checkGeneratesText(b *testing.B, w *fixture.Workload) {
	b.Helper()
	call := w.Call(1)
	call.Message.Text = ""
	var msg []byte
	mailer, err := bench.NewMailer(postroom.TransportFunc(func(_ context.Context, e *postroom.Envelope) error {
		msg = bytes.Clone(e.Data)
		return nil
	}), 1)
	if err != nil {
		b.Fatal(err)
	}
	if err := bench.SendAll(b.Context(), mailer, call); err != nil {
		b.Fatal(err)
	}
	if !bytes.Contains(msg, []byte("Content-Type: text/plain")) {
		b.Fatalf("the call without text has no text/plain part:\n%.2000s", msg)
	}
}

// processCPU returns the CPU time this process has used so far, user and
// system, every thread.
func processCPU(b *testing.B) time.Duration {
	b.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
