package bench

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aymerick/raymond"
	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/fixture"
	"github.com/postroom/postroom/internal/program"
)

// The bodies of the compile-path benchmarks: a call of one recipient, most
// transactional calls, whose cost is nearly all compiling when nothing is
// cached; and the compile of a template alone against raymond's parse.

// BigTemplateBytes is the least size of BigTemplate.
const BigTemplateBytes = 512 << 10

// BigTemplate returns the workload's html repeated to at least
// BigTemplateBytes: a large template of the workload's kind.
func BigTemplate(w *fixture.Workload) string {
	html := w.Base.Message.HTML
	return strings.Repeat(html, (BigTemplateBytes+len(html)-1)/len(html))
}

// OneRecipient measures a one-recipient call of the workload through Send:
// authentication, validation, compiling (or the cache), rendering, MIME and
// a discarding transport. With cached, the Mailer keeps its compiled
// templates and every iteration after the first finds them (warm); without,
// its cache is off and every call compiles its subject, html, text and
// header values (cold). Run it on one core (go test -cpu 1) to compare with
// the goals, which are stated for one core.
func OneRecipient(b *testing.B, w *fixture.Workload, cached bool) {
	size := messageSize(b, w)
	call := w.Call(1)
	var sent atomic.Int64
	opts := postroom.Options{Auth: postroom.NoAuth{}}
	if !cached {
		opts.TemplateCacheEntries = -1
	}
	mailer, err := postroom.New(postroom.TransportFunc(func(context.Context, *postroom.Envelope) error {
		sent.Add(1)
		return nil
	}), opts)
	if err != nil {
		b.Fatal(err)
	}
	ctx := b.Context()
	if err := SendAll(ctx, mailer, call); err != nil { // warms the cache, if any
		b.Fatal(err)
	}
	m := startMeter(b, size, 1, false)
	cpu := startCPU()
	for b.Loop() {
		if err := SendAll(ctx, mailer, call); err != nil {
			b.Fatal(err)
		}
	}
	cpu.stop(b, 1, "cpu-ns/op")
	m.stop()
	if got, want := sent.Load(), int64(b.N)+1; got != want {
		b.Fatalf("the transport saw %d messages, want %d", got, want)
	}
}

// CompilePostroom measures compiling src into a program (HTML mode, no
// limits): postroom's lexer, raymond's grammar ported, and the compiler.
// MB/s counts the source's bytes; so does ns/byte.
func CompilePostroom(b *testing.B, src string) {
	b.ReportAllocs()
	b.SetBytes(int64(len(src)))
	cpu := startCPU()
	for b.Loop() {
		if _, err := program.Compile(b.Context(), src, program.Options{Mode: program.HTML}); err != nil {
			b.Fatal(err)
		}
	}
	cpu.stop(b, 1, "cpu-ns/op")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(src)), "ns/byte")
}

// ParseRaymond measures raymond's parse of src (its lexer and parser, and
// the goroutine and channel between them): what the obvious way does
// before it can Exec. MB/s counts the source's bytes; so does ns/byte.
func ParseRaymond(b *testing.B, src string) {
	b.ReportAllocs()
	b.SetBytes(int64(len(src)))
	cpu := startCPU()
	for b.Loop() {
		if _, err := raymond.Parse(src); err != nil {
			b.Fatal(err)
		}
	}
	cpu.stop(b, 1, "cpu-ns/op")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(src)), "ns/byte")
}
