package postroomotel

import (
	"context"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/postroom/postroom"
)

// TestNoAllocationPerMessage: in a call run through Run (a tally in the
// context), a message handed over and its event allocate nothing, timed
// or not, with every span sampled and the SDK's metrics on.
func TestNoAllocationPerMessage(t *testing.T) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(tracetest.NewNoopExporter()))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	t.Cleanup(func() {
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	for _, every := range []bool{false, true} {
		tel, err := New(Options{TracerProvider: tp, MeterProvider: mp, TimeEveryMessage: every})
		if err != nil {
			t.Fatal(err)
		}
		ctx, span := tp.Tracer("test").Start(t.Context(), "call")
		tl := &tally{Context: ctx, t: tel}
		w := tel.Transport(postroom.TransportFunc(func(context.Context, *postroom.Envelope) error { return nil }))
		env := &postroom.Envelope{SendID: "0123456789abcdef0123456789abcde0", To: []string{"ann@example.com"}, Data: []byte("message")}
		allocs := testing.AllocsPerRun(200, func() {
			if err := w.Send(tl, env); err != nil {
				t.Fatal(err)
			}
			tel.OnEvent(tl, postroom.Event{Type: postroom.EventSend})
		})
		span.End()
		if allocs != 0 {
			t.Errorf("TimeEveryMessage %v: %v allocations per message and event, want none", every, allocs)
		}
		if n := tl.byOutcome[outcomeSent].sent.Load(); n < 200 {
			t.Errorf("TimeEveryMessage %v: the tally counted %d messages, want at least 200", every, n)
		}
	}
}
