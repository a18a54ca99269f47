// Command example sends a receipt through a postroom Mailer instrumented
// with package postroomotel, and exports what it recorded: spans with
// OTLP over HTTP (-otlp URL) or else as JSON on standard output, and
// metrics for Prometheus at /metrics (-prometheus ADDR, served until
// interrupted) or else, without the flag, collected once at the end and
// printed.
//
// Usage:
//
//	go run . -to ann@example.com                                 # memory transport, spans on stdout
//	go run . -smtp localhost:2525 -otlp http://localhost:4318 -prometheus :9464
//
// It is a module of its own so that its exporters (OTLP, Prometheus)
// stay out of the module graph of applications that use postroomotel.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/signal"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/postroom/postroom"
	postroomotel "github.com/postroom/postroom/contrib/otel"
	"github.com/postroom/postroom/transport"
)

func main() {
	to := flag.String("to", "ann@example.com", "the receipt's recipient")
	smtpAddr := flag.String("smtp", "", "relay host:port, without TLS (empty: an in-memory transport)")
	otlp := flag.String("otlp", "", "OTLP/HTTP endpoint URL for spans, such as http://localhost:4318 (empty: spans on stdout)")
	promAddr := flag.String("prometheus", "", "serve Prometheus metrics at ADDR/metrics until interrupted (empty: print the metrics once)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, *to, *smtpAddr, *otlp, *promAddr); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, to, smtpAddr, otlp, promAddr string) (err error) {
	// Spans.
	var exp sdktrace.SpanExporter
	if otlp != "" {
		exp, err = otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(otlp))
	} else {
		exp, err = stdouttrace.New(stdouttrace.WithPrettyPrint())
	}
	if err != nil {
		return err
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp))
	defer func() { err = errors.Join(err, tp.Shutdown(context.WithoutCancel(ctx))) }()

	// Metrics: Prometheus's exporter is a reader; so is a manual one.
	var reader sdkmetric.Reader
	registry := prometheus.NewRegistry()
	if promAddr != "" {
		reader, err = otelprom.New(otelprom.WithRegisterer(registry))
		if err != nil {
			return err
		}
	} else {
		reader = sdkmetric.NewManualReader()
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() { err = errors.Join(err, mp.Shutdown(context.WithoutCancel(ctx))) }()

	tel, err := postroomotel.New(postroomotel.Options{TracerProvider: tp, MeterProvider: mp})
	if err != nil {
		return err
	}
	var tr postroom.Transport = transport.NewMemory()
	if smtpAddr != "" {
		smtp, err := transport.NewSMTP(transport.SMTPOptions{Addr: smtpAddr, TLS: transport.NoTLS})
		if err != nil {
			return err
		}
		defer smtp.Close()
		tr = smtp
	}
	m, err := postroom.New(tel.Transport(tr), postroom.Options{Auth: postroom.NoAuth{}, OnEvent: tel.OnEvent})
	if err != nil {
		return err
	}
	call := &postroom.Call{AccountID: "shop", Message: postroom.Message{
		FromEmail: "shop@example.com", Subject: "Your order {{order}}",
		HTML: "<p>Order {{order}} is on its way.</p>",
	}, Recipients: []postroom.Recipient{{Email: to, Params: map[string]any{"order": 1001}}}}
	results, err := tel.Send(ctx, m, call)
	if err != nil {
		return err
	}
	for _, r := range results {
		fmt.Fprintf(os.Stderr, "%s: %s %s\n", r.Email, r.Status, r.Reason)
	}

	if promAddr == "" {
		var rm metricdata.ResourceMetrics
		if err := reader.(*sdkmetric.ManualReader).Collect(ctx, &rm); err != nil {
			return err
		}
		return json.NewEncoder(os.Stdout).Encode(rm.ScopeMetrics)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(registry, promhttp.HandlerOpts{}))
	srv := &http.Server{Addr: promAddr, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		_ = srv.Shutdown(context.WithoutCancel(ctx))
	}()
	fmt.Fprintf(os.Stderr, "metrics at http://%s/metrics; interrupt to stop\n", promAddr)
	if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
