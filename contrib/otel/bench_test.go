package postroomotel_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/postroom/postroom"
	postroomotel "github.com/postroom/postroom/contrib/otel"
)

// discard is a transport that accepts every message and keeps nothing:
// the Mailer's own work is all that is measured, so the adapter's share
// is the largest it can be (a real relay's latency makes it smaller).
var discard = postroom.TransportFunc(func(context.Context, *postroom.Envelope) error { return nil })

// benchCall is a receipt to n recipients: an HTML body with a loop over
// items, the text part generated from it.
func benchCall(n int) *postroom.Call {
	var html strings.Builder
	html.WriteString(`<html><body><h1>Thank you, {{name}}</h1><p>Your order {{order}} ships today.</p><table>`)
	html.WriteString(`{{#each items}}<tr><td>{{title}}</td><td>{{qty}}</td><td>{{price}}</td></tr>{{/each}}</table>`)
	html.WriteString(strings.Repeat(`<p>Questions? Reply to this mail or see our help pages; we answer within a day.</p>`, 20))
	html.WriteString(`</body></html>`)
	call := &postroom.Call{AccountID: "shop", Message: postroom.Message{
		FromEmail: "shop@example.com", FromName: "Shop", Subject: "Your order {{order}}", HTML: html.String(),
	}}
	items := []any{
		map[string]any{"title": "Tea", "qty": 2, "price": "4.50"},
		map[string]any{"title": "Cups", "qty": 6, "price": "18.00"},
	}
	call.Recipients = make([]postroom.Recipient, n)
	for i := range n {
		call.Recipients[i] = postroom.Recipient{Email: fmt.Sprintf("customer%d@example.com", i),
			Params: map[string]any{"name": fmt.Sprintf("Customer %d", i), "order": 10000 + i, "items": items}}
	}
	return call
}

// BenchmarkOverhead runs the same call on five sides, side by side in
// one binary, for a call of 25,000 recipients and one of a single
// recipient:
//
//   - plain: the Mailer's Run over the transport, no adapter;
//   - hook: plain with a no-op Options.OnEvent, the root's own cost of
//     calling the hook (an Event made per recipient), which an adapter
//     counting events cannot avoid;
//   - span: plain inside one bare span of the SDK (no attribute), every
//     span sampled: the floor of any adapter that makes a span per call;
//   - otel: Telemetry's Run, its Transport wrapper and OnEvent, every
//     span sampled, metrics aggregated by the SDK (a manual reader, never
//     collected);
//   - otel1pct: otel with the SDK's TraceIDRatioBased(0.01) sampler, as a
//     service that keeps one trace in a hundred runs it.
//
// The spans go to a no-op exporter through the SDK's batch span
// processor (WithBatcher), as a production service sets it up: a span's
// end puts its snapshot on the processor's queue, and the processor's
// goroutine hands batches to the exporter, whose work (encoding, the
// network) is the exporter's, not the adapter's. The queue blocks when
// full (WithBlocking) instead of dropping spans, so that no span costs
// less than an exported one. The SDK's synchronous processor
// (WithSyncer), meant for tests, would hand every span to the exporter on
// the caller's goroutine as it ends.
//
// Each iteration runs the five in turn, in an order shuffled every
// iteration, so that the load of a shared machine falls on all alike:
// one call each for the large call, a block of 512 calls each for the
// one-recipient call (an iteration is then 512 calls per side). It
// reports plain's CPU time per call (user and system, of the whole
// process: the SDK's goroutines' and the garbage collector's work
// included) and the CPU time each side adds to plain's, in percent: over
// the whole run (SIDE-%), and the median of the iterations' (SIDE-med-%),
// each iteration's side against the same iteration's plain, which a
// burst of other work on a shared machine during a few iterations does
// not move. The blocks matter: with one call per side in turn, the garbage a side
// leaves is collected during the next sides' calls, and a side that
// allocates more is charged less than its share.
func BenchmarkOverhead(b *testing.B) {
	newTP := func(sampler sdktrace.Sampler) *sdktrace.TracerProvider {
		tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter(), sdktrace.WithBlocking()),
			sdktrace.WithSampler(sampler))
		b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
		return tp
	}
	newTel := func(tp *sdktrace.TracerProvider) *postroomotel.Telemetry {
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
		b.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
		tel, err := postroomotel.New(postroomotel.Options{TracerProvider: tp, MeterProvider: mp})
		if err != nil {
			b.Fatal(err)
		}
		return tel
	}
	bare := newTP(sdktrace.AlwaysSample()).Tracer("bare")
	tel, tel1 := newTel(newTP(sdktrace.AlwaysSample())), newTel(newTP(sdktrace.TraceIDRatioBased(0.01)))
	plain := newMailer(b, discard, postroom.Options{})
	hooked := newMailer(b, discard, postroom.Options{OnEvent: func(context.Context, postroom.Event) {}})
	traced := newMailer(b, tel.Transport(discard), postroom.Options{OnEvent: tel.OnEvent})
	traced1 := newMailer(b, tel1.Transport(discard), postroom.Options{OnEvent: tel1.OnEvent})
	for _, n := range []int{25000, 1} {
		call := benchCall(n)
		sides := []struct {
			name string
			run  func(ctx context.Context) ([]postroom.Result, error)
		}{
			{"plain", func(ctx context.Context) ([]postroom.Result, error) {
				return plain.Run(ctx, postroom.OpSend, call, postroom.RunOptions{})
			}},
			{"hook", func(ctx context.Context) ([]postroom.Result, error) {
				return hooked.Run(ctx, postroom.OpSend, call, postroom.RunOptions{})
			}},
			{"span", func(ctx context.Context) ([]postroom.Result, error) {
				ctx, span := bare.Start(ctx, "call")
				defer span.End()
				return plain.Run(ctx, postroom.OpSend, call, postroom.RunOptions{})
			}},
			{"otel", func(ctx context.Context) ([]postroom.Result, error) {
				return tel.Run(ctx, traced, postroom.OpSend, call, postroom.RunOptions{})
			}},
			{"otel1pct", func(ctx context.Context) ([]postroom.Result, error) {
				return tel1.Run(ctx, traced1, postroom.OpSend, call, postroom.RunOptions{})
			}},
		}
		// A block of calls per side: long enough (about 5 MB of garbage
		// for the one-recipient call) that the garbage collections a side
		// sets off mostly run, and are counted, in its own block.
		block := max(1, 512/n)
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			cpu := make([]time.Duration, len(sides))
			order := make([]int, len(sides))
			for k := range order {
				order[k] = k
			}
			rng := rand.New(rand.NewPCG(1, uint64(n)))
			calls := 0
			round := make([]time.Duration, len(sides))
			ratios := make([][]float64, len(sides))
			for b.Loop() {
				rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
				for _, side := range order {
					c0 := cpuTime()
					for range block {
						if _, err := sides[side].run(b.Context()); err != nil {
							b.Fatal(err)
						}
					}
					round[side] = cpuTime() - c0
					cpu[side] += round[side]
				}
				for i := 1; i < len(sides); i++ {
					ratios[i] = append(ratios[i], 100*(float64(round[i])-float64(round[0]))/float64(max(round[0], 1)))
				}
				calls += block
			}
			b.ReportMetric(float64(cpu[0].Nanoseconds())/float64(calls), "plain-cpu-ns/call")
			for i := 1; i < len(sides); i++ {
				b.ReportMetric(100*(float64(cpu[i])-float64(cpu[0]))/float64(cpu[0]), sides[i].name+"-%")
				slices.Sort(ratios[i])
				b.ReportMetric(ratios[i][len(ratios[i])/2], sides[i].name+"-med-%")
			}
		})
	}
}
