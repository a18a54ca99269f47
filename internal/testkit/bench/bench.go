package bench

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"runtime/metrics"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aymerick/raymond"
	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/program"
	"github.com/postroom/postroom/internal/testkit/fixture"
)

// The benchmark bodies below (RenderPostroom, RenderRaymond, MIMEPostroom,
// MIMEGoMail, PipelinePostroom, PipelineObvious, Memmove) are shared by the
// Benchmark functions of package benchmarks and by benchmarks/cmd/report,
// which runs them with testing.Benchmark. Each
// sets up outside the timed loop, runs b.Loop, and reports ns/recipient,
// allocs/recipient and B/recipient with b.ReportMetric, and MB/s counted in
// postroom's average message size (MessageSize). They fail the benchmark
// rather than report a figure for work that was not done. Each reads the
// Workload only; several may run at once, though their figures then
// disturb one another. The helpers (Discard, NewMailer, SendAll,
// MessageSize, Message) are safe for concurrent use.

// errNotSent is returned by SendAll when a recipient was not sent.
var errNotSent = errors.New("bench: a recipient was not sent")

// MIMECallSize is the number of recipients of the static call that
// MIMEPostroom sends per iteration.
const MIMECallSize = 1000

// Concurrency is the number of recipients both pipelines have in flight at
// once: postroom's default for this machine, max(8, 4 × GOMAXPROCS).
func Concurrency() int { return max(8, 4*runtime.GOMAXPROCS(0)) }

// Discard returns a Transport that accepts every message and drops it. It
// keeps nothing and is safe for concurrent use.
func Discard() postroom.Transport {
	return postroom.TransportFunc(func(context.Context, *postroom.Envelope) error { return nil })
}

// NewMailer returns a postroom Mailer over t with no authentication and the
// given concurrency (0: postroom's default). The Mailer is the caller's.
func NewMailer(t postroom.Transport, concurrency int) (*postroom.Mailer, error) {
	return postroom.New(t, postroom.Options{Auth: postroom.NoAuth{}, Concurrency: concurrency})
}

// SendAll sends call with m and fails unless every recipient was sent:
// it returns Send's error, or an error naming the first recipient whose
// status is not sent.
func SendAll(ctx context.Context, m *postroom.Mailer, call *postroom.Call) error {
	results, err := m.Send(ctx, call)
	if err != nil {
		return err
	}
	return allSent(results)
}

// allSent is nil when every result is sent, or the first other one as an
// error.
func allSent(results []postroom.Result) error {
	for i, r := range results {
		if r.Status != postroom.StatusSent {
			return fmt.Errorf("%w: recipient %d: %s %s", errNotSent, i, r.Status, r.Reason)
		}
	}
	return nil
}

// MessageSize returns the average size in bytes of postroom's messages for
// the workload's samples.
func MessageSize(w *fixture.Workload) (int, error) {
	var total, count atomic.Int64
	m, err := NewMailer(postroom.TransportFunc(func(_ context.Context, env *postroom.Envelope) error {
		total.Add(int64(len(env.Data)))
		count.Add(1)
		return nil
	}), 0)
	if err != nil {
		return 0, err
	}
	if err := SendAll(context.Background(), m, w.Call(w.Samples())); err != nil {
		return 0, err
	}
	return int(total.Load() / count.Load()), nil
}

// Message returns postroom's message for recipient i of a call made from w,
// in a new slice owned by the caller.
func Message(w *fixture.Workload, i int) ([]byte, error) {
	var msg []byte
	m, err := NewMailer(postroom.TransportFunc(func(_ context.Context, env *postroom.Envelope) error {
		if env.To[0] == w.Recipient(i).Email {
			msg = bytes.Clone(env.Data)
		}
		return nil
	}), 1)
	if err != nil {
		return nil, err
	}
	if err := SendAll(context.Background(), m, w.Call(i+1)); err != nil {
		return nil, err
	}
	return msg, nil
}

// meter measures a b.Loop: allocations from the runtime's counters, time
// from b.Elapsed, and, when asked, the peak heap from a sampling goroutine.
type meter struct {
	b       *testing.B
	perOp   int
	before  runtime.MemStats
	sampler *heapSampler
}

// startMeter is called right before the loop; perOp is the number of
// recipients one iteration handles.
func startMeter(b *testing.B, msgSize, perOp int, heap bool) *meter {
	b.Helper()
	b.ReportAllocs()
	b.SetBytes(int64(msgSize) * int64(perOp))
	m := &meter{b: b, perOp: perOp}
	runtime.GC()
	runtime.GC() // a second cycle so that the first one's garbage is swept
	if heap {
		m.sampler = startHeapSampler(time.Millisecond)
	}
	runtime.ReadMemStats(&m.before)
	return m
}

// stop is called right after the loop.
func (m *meter) stop() {
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	b := m.b
	recipients := float64(b.N) * float64(m.perOp)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/recipients, "ns/recipient")
	b.ReportMetric(float64(after.Mallocs-m.before.Mallocs)/recipients, "allocs/recipient")
	b.ReportMetric(float64(after.TotalAlloc-m.before.TotalAlloc)/recipients, "B/recipient")
	if m.sampler != nil {
		base, heap, live := m.sampler.stop()
		b.ReportMetric(float64(base)/1e6, "base-heap-MB")
		b.ReportMetric(float64(heap)/1e6, "peak-heap-MB")
		b.ReportMetric(float64(live)/1e6, "peak-live-MB")
	}
}

// heapSampler records the largest heap seen while it runs.
type heapSampler struct {
	quit       chan struct{}
	done       chan struct{}
	base       uint64 // heap objects when sampling started
	heap, live uint64
}

const (
	metricHeapObjects = "/memory/classes/heap/objects:bytes"
	metricHeapLive    = "/gc/heap/live:bytes"
)

func startHeapSampler(every time.Duration) *heapSampler {
	s := &heapSampler{quit: make(chan struct{}), done: make(chan struct{})}
	samples := []metrics.Sample{{Name: metricHeapObjects}, {Name: metricHeapLive}}
	read := func() {
		metrics.Read(samples)
		s.heap = max(s.heap, samples[0].Value.Uint64())
		s.live = max(s.live, samples[1].Value.Uint64())
	}
	read()
	s.base = s.heap
	go func() {
		defer close(s.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-s.quit:
				read()
				return
			case <-t.C:
				read()
			}
		}
	}()
	return s
}

// stop ends the sampling and returns the peaks, in bytes.
func (s *heapSampler) stop() (base, heap, live uint64) {
	close(s.quit)
	<-s.done
	return s.base, s.heap, s.live
}

// messageSize is MessageSize(w), or fails b.
func messageSize(b *testing.B, w *fixture.Workload) int {
	b.Helper()
	size, err := MessageSize(w)
	if err != nil {
		b.Fatal(err)
	}
	return size
}

// RenderPostroom measures postroom's render step per recipient: the
// subject, html and text programs compiled once, Append into reused buffers,
// recipients taken from the samples in turn.
func RenderPostroom(b *testing.B, w *fixture.Workload) {
	size := messageSize(b, w)
	msg := &w.Base.Message
	var progs [3]*program.Program
	for i, p := range []struct {
		src  string
		mode program.Mode
	}{{msg.Subject, program.Text}, {msg.HTML, program.HTML}, {msg.Text, program.Text}} {
		var err error
		if progs[i], err = program.Compile(b.Context(), p.src, program.Options{Mode: p.mode}); err != nil {
			b.Fatal(err)
		}
	}
	var bufs [3][]byte
	d := &program.Data{Globals: w.Base.GlobalParams}
	i := 0
	m := startMeter(b, size, 1, false)
	for b.Loop() {
		d.Params = w.Base.Recipients[i%w.Samples()].Params
		d.Missing = d.Missing[:0]
		i++
		for k, p := range progs {
			var err error
			if bufs[k], err = p.Append(b.Context(), bufs[k][:0], d); err != nil {
				b.Fatal(err)
			}
		}
	}
	m.stop()
}

// RenderRaymond measures raymond's render step per recipient, the obvious
// way: the subject, html and text parsed once, and per recipient the global
// and recipient params merged into one map and each template Exec'd.
func RenderRaymond(b *testing.B, w *fixture.Workload) {
	size := messageSize(b, w)
	msg := &w.Base.Message
	var tpls [3]*raymond.Template
	for i, src := range []string{msg.Subject, msg.HTML, msg.Text} {
		var err error
		if tpls[i], err = raymond.Parse(src); err != nil {
			b.Fatal(err)
		}
	}
	call := fixture.PlainCall(w.Call(w.Samples()))
	i := 0
	m := startMeter(b, size, 1, false)
	for b.Loop() {
		r := &call.Recipients[i%w.Samples()]
		i++
		params := make(map[string]any, len(call.GlobalParams)+len(r.Params))
		maps.Copy(params, call.GlobalParams)
		maps.Copy(params, r.Params)
		for _, t := range tpls {
			if _, err := t.Exec(params); err != nil {
				b.Fatal(err)
			}
		}
	}
	m.stop()
}

// MIMEPostroom measures postroom's MIME as far as it is reachable from
// outside the package: the whole Mailer, Concurrency 1, sending a
// StaticCall of MIMECallSize recipients into a discarding transport. Per
// recipient that is MIME plus the Mailer's own work (address checks, send
// id, a Result, the transport call) and no rendering beyond copying the
// static bodies.
func MIMEPostroom(b *testing.B, w *fixture.Workload) {
	size := messageSize(b, w)
	call, err := w.StaticCall(MIMECallSize)
	if err != nil {
		b.Fatal(err)
	}
	var sent atomic.Int64
	mailer, err := NewMailer(postroom.TransportFunc(func(context.Context, *postroom.Envelope) error {
		sent.Add(1)
		return nil
	}), 1)
	if err != nil {
		b.Fatal(err)
	}
	ctx := b.Context()
	m := startMeter(b, size, MIMECallSize, false)
	for b.Loop() {
		if err := SendAll(ctx, mailer, call); err != nil {
			b.Fatal(err)
		}
	}
	m.stop()
	if got, want := sent.Load(), int64(b.N)*MIMECallSize; got != want {
		b.Fatalf("the transport saw %d messages, want %d", got, want)
	}
}

// MIMEGoMail measures go-mail's MIME per recipient on the same pre-rendered
// bodies as MIMEPostroom: a new Msg per recipient, filled the obvious way
// and written with WriteTo into a reused buffer (see Obvious). Images and
// attachments are decoded once, outside the loop.
func MIMEGoMail(b *testing.B, w *fixture.Workload) {
	size := messageSize(b, w)
	call, err := w.StaticCall(w.Samples())
	if err != nil {
		b.Fatal(err)
	}
	c, err := parseObvious(call, raymond.Parse)
	if err != nil {
		b.Fatal(err)
	}
	p := &fixture.Parts{Subject: call.Message.Subject, HTML: call.Message.HTML, Text: call.Message.Text}
	values := make([]string, len(call.Message.Headers))
	for i, h := range call.Message.Headers {
		values[i] = h.Value
	}
	var buf bytes.Buffer
	i := 0
	m := startMeter(b, size, 1, false)
	for b.Loop() {
		buf.Reset()
		if err := writeGoMail(&buf, c, p, values, &call.Recipients[i%len(call.Recipients)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
	m.stop()
}

// PipelinePostroom measures postroom's whole pipeline: a Mailer with
// Concurrency() workers sending Call(n) into a transport that counts and
// discards. It also reports the heap figures (see package benchmarks'
// documentation) and cpu-ns/recipient, the process's CPU time.
func PipelinePostroom(b *testing.B, w *fixture.Workload, n int) {
	pipeline(b, w, n, postroom.Options{})
}

// pipeline is PipelinePostroom with the Mailer's options opts (Auth and
// Concurrency filled in).
func pipeline(b *testing.B, w *fixture.Workload, n int, opts postroom.Options) {
	pipelineCall(b, w, w.Call(n), opts)
}

// pipelineCall is pipeline sending call.
func pipelineCall(b *testing.B, w *fixture.Workload, call *postroom.Call, opts postroom.Options) {
	size := messageSize(b, w)
	n := len(call.Recipients)
	var sent atomic.Int64
	opts.Auth, opts.Concurrency = postroom.NoAuth{}, Concurrency()
	mailer, err := postroom.New(postroom.TransportFunc(func(context.Context, *postroom.Envelope) error {
		sent.Add(1)
		return nil
	}), opts)
	if err != nil {
		b.Fatal(err)
	}
	ctx := b.Context()
	m := startMeter(b, size, n, true)
	cpu := startCPU()
	for b.Loop() {
		if err := SendAll(ctx, mailer, call); err != nil {
			b.Fatal(err)
		}
	}
	cpu.stop(b, n, "cpu-ns/recipient")
	m.stop()
	if got, want := sent.Load(), int64(b.N)*int64(n); got != want {
		b.Fatalf("the transport saw %d messages, want %d", got, want)
	}
}

// PipelineObvious measures the obvious raymond + go-mail pipeline (Obvious)
// with Concurrency() recipients in flight, sending Call(n) into a transport
// that counts and discards. It also reports the heap figures (see package
// benchmarks' documentation) and cpu-ns/recipient.
func PipelineObvious(b *testing.B, w *fixture.Workload, n int) {
	obviousPipeline(b, w, fixture.PlainCall(w.Call(n)), &Obvious{})
}

// obviousPipeline is PipelineObvious sending call (see fixture.PlainCall)
// with o, whose Transport and Concurrency it sets.
func obviousPipeline(b *testing.B, w *fixture.Workload, call *postroom.Call, o *Obvious) {
	size := messageSize(b, w)
	n := len(call.Recipients)
	var sent atomic.Int64
	o.Transport = postroom.TransportFunc(func(context.Context, *postroom.Envelope) error {
		sent.Add(1)
		return nil
	})
	o.Concurrency = Concurrency()
	ctx := b.Context()
	m := startMeter(b, size, n, true)
	cpu := startCPU()
	for b.Loop() {
		if err := o.Send(ctx, call); err != nil {
			b.Fatal(err)
		}
	}
	cpu.stop(b, n, "cpu-ns/recipient")
	m.stop()
	if got, want := sent.Load(), int64(b.N)*int64(n); got != want {
		b.Fatalf("the transport saw %d messages, want %d", got, want)
	}
}

// FloorBytes is the total size of the buffers Memmove rotates through:
// twice this machine class's 32 MiB L3, so that each destination is cold
// when it comes round again.
const FloorBytes = 64 << 20

// Memmove measures the floor: copying one finished postroom message into a
// cold buffer, rotating through destination buffers of FloorBytes in all.
// MB/s counts the size of that message.
func Memmove(b *testing.B, w *fixture.Workload) {
	src, err := Message(w, 0)
	if err != nil {
		b.Fatal(err)
	}
	dst := make([][]byte, max(2, FloorBytes/len(src)))
	for i := range dst {
		dst[i] = make([]byte, len(src))
	}
	i := 0
	m := startMeter(b, len(src), 1, false)
	for b.Loop() {
		copy(dst[i], src)
		i++
		if i == len(dst) {
			i = 0
		}
	}
	m.stop()
}

// DKIMKeys are the key kinds PipelineDKIM signs with: "" (unsigned),
// "ed25519" and "rsa-2048".
var DKIMKeys = []string{"", "ed25519", "rsa-2048"}

// dkimKey returns a new key of the given kind, one of DKIMKeys but "".
func dkimKey(kind string) (crypto.Signer, error) {
	switch kind {
	case "ed25519":
		_, key, err := ed25519.GenerateKey(rand.Reader)
		return key, err
	case "rsa-2048":
		return rsa.GenerateKey(rand.Reader, 2048)
	}
	return nil, fmt.Errorf("bench: unknown DKIM key kind %q", kind)
}

// DKIM domain and selector of both pipelines' signatures.
const (
	dkimDomain   = "shop.example.com"
	dkimSelector = "bench"
)

// dkimSigner returns a signer with a new key of the given kind, or nil
// for "".
func dkimSigner(kind string) ([]postroom.DKIMSigner, error) {
	if kind == "" {
		return nil, nil
	}
	key, err := dkimKey(kind)
	if err != nil {
		return nil, err
	}
	return postroomDKIM(key), nil
}

// postroomDKIM is postroom's signer with key.
func postroomDKIM(key crypto.Signer) []postroom.DKIMSigner {
	return []postroom.DKIMSigner{{Domain: dkimDomain, Selector: dkimSelector, Key: key}}
}

// PipelineDKIM is PipelinePostroom with every message DKIM-signed with a
// key of the given kind (one of DKIMKeys; "" signs nothing), made outside
// the timed loop.
func PipelineDKIM(b *testing.B, w *fixture.Workload, n int, kind string) {
	signers, err := dkimSigner(kind)
	if err != nil {
		b.Fatal(err)
	}
	pipeline(b, w, n, postroom.Options{DKIM: signers})
}
