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

// BenchmarkOverhead runs the same call without the adapter (plain: the
// Mailer's Run over the transport) and with it (otel: Telemetry's Run,
// its Transport wrapper and OnEvent, spans sampled and ended into a
// no-op exporter, metrics aggregated by the SDK), for a call of 25,000
// recipients and one of a single recipient, and a third side, hooked:
// plain with a no-op Options.OnEvent, the root's own cost of calling the
// hook (an Event made per recipient), which the adapter cannot avoid.
// Each iteration runs the three in turn (the order rotated every
// iteration), so that the load of a
// shared machine falls on both alike; it reports each side's CPU time
// (user and system, of the whole process: the SDK's and the garbage
// collector's work included) and wall time per call, overhead-%, the
// CPU time otel adds to plain's, and hook-%, what hooked adds.
func BenchmarkOverhead(b *testing.B) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(tracetest.NewNoopExporter()))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	b.Cleanup(func() {
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	tel, err := postroomotel.New(postroomotel.Options{TracerProvider: tp, MeterProvider: mp})
	if err != nil {
		b.Fatal(err)
	}
	plain := newMailer(b, discard, postroom.Options{})
	hooked := newMailer(b, discard, postroom.Options{OnEvent: func(context.Context, postroom.Event) {}})
	traced := newMailer(b, tel.Transport(discard), postroom.Options{OnEvent: tel.OnEvent})
	for _, n := range []int{25000, 1} {
		call := benchCall(n)
		sides := [3]func(ctx context.Context) error{
			func(ctx context.Context) error {
				_, err := plain.Run(ctx, postroom.OpSend, call, postroom.RunOptions{})
				return err
			},
			func(ctx context.Context) error {
				_, err := hooked.Run(ctx, postroom.OpSend, call, postroom.RunOptions{})
				return err
			},
			func(ctx context.Context) error {
				_, err := tel.Run(ctx, traced, postroom.OpSend, call, postroom.RunOptions{})
				return err
			},
		}
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			var cpu, wall [3]time.Duration
			calls := 0
			for b.Loop() {
				for k := range 3 {
					side := (calls + k) % 3
					c0, w0 := cpuTime(), time.Now()
					if err := sides[side](b.Context()); err != nil {
						b.Fatal(err)
					}
					cpu[side] += cpuTime() - c0
					wall[side] += time.Since(w0)
				}
				calls++
			}
			per := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(calls) }
			b.ReportMetric(per(cpu[0]), "plain-cpu-ns/call")
			b.ReportMetric(per(cpu[2]), "otel-cpu-ns/call")
			b.ReportMetric(per(wall[0]), "plain-ns/call")
			b.ReportMetric(per(wall[2]), "otel-ns/call")
			b.ReportMetric(100*(float64(cpu[2])-float64(cpu[0]))/float64(cpu[0]), "overhead-%")
			b.ReportMetric(100*(float64(cpu[1])-float64(cpu[0]))/float64(cpu[0]), "hook-%")
		})
	}
}
