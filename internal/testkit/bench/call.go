package bench

import (
	"context"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aymerick/raymond"
	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/program"
	"github.com/postroom/postroom/internal/testkit/fixture"
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
// header values (cold). The goals are stated for GOMAXPROCS 1 and 2: run it
// with -cpu 1,2.
func OneRecipient(b *testing.B, w *fixture.Workload, cached bool) {
	oneRecipientPostroom(b, w, cached, false)
}

// oneRecipientPostroom is OneRecipient sending the same call every time
// or, with fresh, oneCall's copies in turn.
func oneRecipientPostroom(b *testing.B, w *fixture.Workload, cached, fresh bool) {
	opts := postroom.Options{Auth: postroom.NoAuth{}}
	if !cached {
		opts.TemplateCacheEntries = -1
	}
	call := w.Call(1)
	oneCall(b, w, func(t postroom.Transport, copies []*postroom.Call) (func(context.Context, int) error, error) {
		mailer, err := postroom.New(t, opts)
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context, i int) error {
			if fresh {
				return SendAll(ctx, mailer, copies[i%len(copies)])
			}
			return SendAll(ctx, mailer, call)
		}, nil
	})
}

// oneCall measures one-recipient calls: setup makes, over a transport that
// counts and discards, the function that sends the i-th call; it is called
// once (i = 0) before the timer starts, which warms any cache, and then
// with i = 1, 2, ... in the timed loop. It reports ns/op and cpu-ns/op
// besides the per-recipient figures, and fails unless every call handed
// over one message.
//
// It gives setup FreshCalls copies of the call with fresh file strings
// (see OneRecipientFresh) and keeps them alive through the loop whether
// the sender uses them or not: every one-recipient benchmark runs with the
// same live heap, and so the same pace of the garbage collector. (With
// only one call alive the heap stays under the collector's 4 MB minimum
// goal, and it runs about three times as often as with the copies.)
func oneCall(b *testing.B, w *fixture.Workload, setup func(t postroom.Transport, copies []*postroom.Call) (func(context.Context, int) error, error)) {
	size := messageSize(b, w)
	copies := make([]*postroom.Call, FreshCalls)
	for i := range copies {
		copies[i] = freshFiles(w.Call(1))
	}
	var sent atomic.Int64
	send, err := setup(postroom.TransportFunc(func(context.Context, *postroom.Envelope) error {
		sent.Add(1)
		return nil
	}), copies)
	if err != nil {
		b.Fatal(err)
	}
	ctx := b.Context()
	if err := send(ctx, 0); err != nil {
		b.Fatal(err)
	}
	i := 0
	m := startMeter(b, size, 1, false)
	cpu := startCPU()
	for b.Loop() {
		i++
		if err := send(ctx, i); err != nil {
			b.Fatal(err)
		}
	}
	cpu.stop(b, 1, "cpu-ns/op")
	m.stop()
	runtime.KeepAlive(copies)
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
