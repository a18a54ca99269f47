package postroomotel_test

import (
	"context"
	"fmt"
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

// BenchmarkOverhead runs the same call on four sides, side by side in
// one binary, for a call of 25,000 recipients and one of a single
// recipient:
//
//   - plain: the Mailer's Run over the transport, no adapter;
//   - hook: plain with a no-op Options.OnEvent, the root's own cost of
//     calling the hook (an Event made per recipient), which an adapter
//     counting events cannot avoid;
//   - otel: Telemetry's Run, its Transport wrapper and OnEvent, every
//     span sampled and ended into a no-op exporter, metrics aggregated by
//     the SDK (a manual reader, never collected);
//   - otel1pct: otel with the SDK's TraceIDRatioBased(0.01) sampler, as a
//     service that keeps one trace in a hundred runs it.
//
// Each iteration runs the four in turn (the order rotated every
// iteration), so that the load of a shared machine falls on all alike;
// it reports each side's CPU time per call (user and system, of the whole
// process: the SDK's and the garbage collector's work included) and the
// CPU time each side adds to plain's, in percent.
func BenchmarkOverhead(b *testing.B) {
	newTel := func(sampler sdktrace.Sampler) *postroomotel.Telemetry {
		tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(tracetest.NewNoopExporter()), sdktrace.WithSampler(sampler))
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
		b.Cleanup(func() {
			_ = tp.Shutdown(context.Background())
			_ = mp.Shutdown(context.Background())
		})
		tel, err := postroomotel.New(postroomotel.Options{TracerProvider: tp, MeterProvider: mp})
		if err != nil {
			b.Fatal(err)
		}
		return tel
	}
	tel, tel1 := newTel(sdktrace.AlwaysSample()), newTel(sdktrace.TraceIDRatioBased(0.01))
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
			{"otel", func(ctx context.Context) ([]postroom.Result, error) {
				return tel.Run(ctx, traced, postroom.OpSend, call, postroom.RunOptions{})
			}},
			{"otel1pct", func(ctx context.Context) ([]postroom.Result, error) {
				return tel1.Run(ctx, traced1, postroom.OpSend, call, postroom.RunOptions{})
			}},
		}
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			cpu := make([]time.Duration, len(sides))
			calls := 0
			for b.Loop() {
				for k := range sides {
					side := (calls + k) % len(sides)
					c0 := cpuTime()
					if _, err := sides[side].run(b.Context()); err != nil {
						b.Fatal(err)
					}
					cpu[side] += cpuTime() - c0
				}
				calls++
			}
			b.ReportMetric(float64(cpu[0].Nanoseconds())/float64(calls), "plain-cpu-ns/call")
			for i := 1; i < len(sides); i++ {
				b.ReportMetric(100*(float64(cpu[i])-float64(cpu[0]))/float64(cpu[0]), sides[i].name+"-%")
			}
		})
	}
}
