package postroomotel_test

import (
	"context"
	"fmt"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/postroom/postroom"
	postroomotel "github.com/postroom/postroom/contrib/otel"
	"github.com/postroom/postroom/transport"
)

// A call run through Telemetry's Run gets a span with its recipients'
// counts by status, set when it ends; its messages, handed to the
// wrapped transport, are counted by the metrics.
func ExampleTelemetry_Run() {
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	defer tp.Shutdown(context.Background())
	tel, err := postroomotel.New(postroomotel.Options{TracerProvider: tp})
	if err != nil {
		panic(err)
	}
	m, err := postroom.New(tel.Transport(transport.NewMemory()), postroom.Options{Auth: postroom.NoAuth{}, OnEvent: tel.OnEvent})
	if err != nil {
		panic(err)
	}
	call := &postroom.Call{
		Message:    postroom.Message{FromEmail: "shop@example.com", Subject: "Your order", Text: "It ships today."},
		Recipients: []postroom.Recipient{{Email: "ann@example.com"}, {Email: "not an address"}},
	}
	if _, err := tel.Run(context.Background(), m, postroom.OpSend, call, postroom.RunOptions{}); err != nil {
		panic(err)
	}
	for _, s := range spans.GetSpans() {
		fmt.Print(s.Name, " ", s.SpanKind)
		for _, kv := range s.Attributes {
			switch kv.Key {
			case "messaging.operation.type", "messaging.batch.message_count", "postroom.recipients.sent", "postroom.recipients.invalid":
				fmt.Printf(" %s=%s", kv.Key, kv.Value.String())
			}
		}
		fmt.Println()
	}
	// Output:
	// message.send producer messaging.operation.type=send messaging.batch.message_count=2 postroom.recipients.sent=1 postroom.recipients.invalid=1
}
