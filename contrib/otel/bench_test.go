package postroomotel_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

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
// no-op exporter, metrics aggregated by the SDK), side by side in one
// binary, for a call of 25,000 recipients and one of a single recipient.
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
	traced := newMailer(b, tel.Transport(discard), postroom.Options{OnEvent: tel.OnEvent})
	for _, n := range []int{25000, 1} {
		call := benchCall(n)
		b.Run(fmt.Sprintf("N=%d/plain", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := plain.Run(b.Context(), postroom.OpSend, call, postroom.RunOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("N=%d/otel", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := tel.Run(b.Context(), traced, postroom.OpSend, call, postroom.RunOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
