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
// counts by status; each message handed to the wrapped transport gets a
// span inside it.
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
		fmt.Print(s.Name)
		for _, kv := range s.Attributes {
			switch kv.Key {
			case "postroom.recipients.sent", "postroom.recipients.invalid", "postroom.outcome":
				fmt.Printf(" %s=%s", kv.Key, kv.Value.Emit())
			}
		}
		fmt.Println()
	}
	// Output:
	// send postroom.outcome=sent
	// message.send postroom.recipients.sent=1 postroom.recipients.invalid=1
}
