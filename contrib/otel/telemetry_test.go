package postroomotel_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/postroom/postroom"
	postroomotel "github.com/postroom/postroom/contrib/otel"
	"github.com/postroom/postroom/transport"
)

// kit is a Telemetry whose spans and metrics a test reads back with the
// SDK's in-memory exporter and manual reader.
type kit struct {
	tp     *sdktrace.TracerProvider
	mp     *sdkmetric.MeterProvider
	tel    *postroomotel.Telemetry
	spans  *tracetest.InMemoryExporter
	reader *sdkmetric.ManualReader
}

func newKit(t testing.TB) *kit { return newKitWith(t, postroomotel.Options{}) }

// newKitWith is newKit with opts (its providers replaced by the kit's).
func newKitWith(t testing.TB, opts postroomotel.Options, readerOpts ...sdkmetric.ManualReaderOption) *kit {
	t.Helper()
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	reader := sdkmetric.NewManualReader(readerOpts...)
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() {
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	opts.TracerProvider, opts.MeterProvider = tp, mp
	tel, err := postroomotel.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return &kit{tp: tp, mp: mp, tel: tel, spans: spans, reader: reader}
}

// metrics collects the metrics, by name.
func (k *kit) metrics(t testing.TB) map[string]metricdata.Aggregation {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := k.reader.Collect(t.Context(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]metricdata.Aggregation{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			out[m.Name] = m.Data
		}
	}
	return out
}

// sum returns the sum's value at the point whose attributes include
// want, or -1 when there is none.
func sum(t testing.TB, data metricdata.Aggregation, want ...attribute.KeyValue) int64 {
	t.Helper()
	s, ok := data.(metricdata.Sum[int64])
	if !ok {
		t.Fatalf("%T is not an int64 sum", data)
	}
	for _, p := range s.DataPoints {
		if hasAll(p.Attributes, want) {
			return p.Value
		}
	}
	return -1
}

func hasAll(set attribute.Set, want []attribute.KeyValue) bool {
	for _, kv := range want {
		if v, ok := set.Value(kv.Key); !ok || v != kv.Value {
			return false
		}
	}
	return true
}

func attrs(s sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes() {
		m[kv.Key] = kv.Value
	}
	return m
}

func newMailer(t testing.TB, tr postroom.Transport, opts postroom.Options) *postroom.Mailer {
	t.Helper()
	opts.Auth = postroom.NoAuth{}
	m, err := postroom.New(tr, opts)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func receipt(emails ...string) *postroom.Call {
	call := &postroom.Call{AccountID: "shop", Message: postroom.Message{
		FromEmail: "shop@example.com", Subject: "Your order {{order}}",
		HTML: "<p>Order {{order}} is on its way.</p>",
	}}
	for i, e := range emails {
		call.Recipients = append(call.Recipients, postroom.Recipient{Email: e, Params: map[string]any{"order": 1000 + i}})
	}
	return call
}

// TestSendSpansAndMetrics runs a call of three recipients (one of them
// invalid) through Run: the call's span alone, with the counts, and the
// metrics of its two messages, recorded when it ends (both timed, with
// TimeEveryMessage).
func TestSendSpansAndMetrics(t *testing.T) {
	k := newKitWith(t, postroomotel.Options{TimeEveryMessage: true})
	mem := transport.NewMemory()
	m := newMailer(t, k.tel.Transport(mem), postroom.Options{OnEvent: k.tel.OnEvent})
	results, err := k.tel.Send(t.Context(), m, receipt("ann@example.com", "bob@example.net", "not an address"))
	if err != nil {
		t.Fatal(err)
	}
	if results[0].Status != postroom.StatusSent || results[1].Status != postroom.StatusSent || results[2].Status != postroom.StatusInvalid {
		t.Fatalf("results %+v, want sent, sent, invalid", results)
	}

	spans := k.spans.GetSpans().Snapshots()
	if len(spans) != 1 || spans[0].Name() != "message.send" {
		t.Fatalf("spans %v, want the call's alone, message.send (no span per message by default)", spans)
	}
	call := spans[0]
	ca := attrs(call)
	if ca["postroom.recipients.sent"].AsInt64() != 2 || ca["postroom.recipients.invalid"].AsInt64() != 1 ||
		ca["messaging.batch.message_count"].AsInt64() != 3 || ca["postroom.account_id"].AsString() != "shop" {
		t.Errorf("call span attributes %v, want 2 sent, 1 invalid of 3, account shop", ca)
	}
	if ca["messaging.system"].AsString() != "smtp" || ca["messaging.operation.name"].AsString() != "send" ||
		ca["messaging.operation.type"].AsString() != "send" || call.SpanKind() != trace.SpanKindProducer {
		t.Errorf("call span kind %v attributes %v, want a producer, smtp, send, send", call.SpanKind(), ca)
	}
	if _, ok := ca["postroom.recipients.deferred"]; ok {
		t.Errorf("call span has a count of deferred recipients, none was: %v", ca)
	}
	if call.Status().Code == codes.Error {
		t.Errorf("call span status %v, want not an error", call.Status())
	}
	bytes := int64(0)
	for _, env := range mem.Envelopes() {
		bytes += int64(len(env.Data))
	}

	ms := k.metrics(t)
	if n := sum(t, ms["messaging.client.sent.messages"], attribute.String("postroom.outcome", "sent"), attribute.String("messaging.system", "smtp")); n != 2 {
		t.Errorf("messaging.client.sent.messages sent = %d, want 2", n)
	}
	if n := sum(t, ms["postroom.message.bytes"], attribute.String("postroom.outcome", "sent")); n != bytes {
		t.Errorf("postroom.message.bytes sent = %d, want %d", n, bytes)
	}
	if n := sum(t, ms["postroom.recipients"], attribute.String("postroom.status", "sent"), attribute.String("postroom.reason", "")); n != 2 {
		t.Errorf("postroom.recipients sent = %d, want 2", n)
	}
	if n := sum(t, ms["postroom.recipients"], attribute.String("postroom.status", "invalid"), attribute.String("postroom.reason", "invalid-email")); n != 1 {
		t.Errorf("postroom.recipients invalid, invalid-email = %d, want 1", n)
	}
	if n := sum(t, ms["postroom.events"], attribute.String("postroom.event", "send")); n != 2 {
		t.Errorf("postroom.events send = %d, want 2", n)
	}
	dur, ok := ms["messaging.client.operation.duration"].(metricdata.Histogram[float64])
	if !ok || len(dur.DataPoints) != 1 || dur.DataPoints[0].Count != 2 || dur.DataPoints[0].Sum <= 0 {
		t.Errorf("messaging.client.operation.duration %+v, want 2 hand-overs that took time", ms["messaging.client.operation.duration"])
	}
}

// TestMessageSpans: with MessageSpanLimit, the messages of a call of up
// to that many recipients get spans of their own inside the call's; a
// larger call's do not.
func TestMessageSpans(t *testing.T) {
	k := newKitWith(t, postroomotel.Options{MessageSpanLimit: 2})
	mem := transport.NewMemory()
	m := newMailer(t, k.tel.Transport(mem), postroom.Options{OnEvent: k.tel.OnEvent})
	if _, err := k.tel.Send(t.Context(), m, receipt("ann@example.com", "bob@example.net")); err != nil {
		t.Fatal(err)
	}
	spans := k.spans.GetSpans().Snapshots()
	if len(spans) != 3 {
		t.Fatalf("%d spans, want the call's and two messages'", len(spans))
	}
	var call sdktrace.ReadOnlySpan
	var sends []sdktrace.ReadOnlySpan
	for _, s := range spans {
		if s.Name() == "message.send" {
			call = s
		} else {
			sends = append(sends, s)
		}
	}
	if call == nil {
		t.Fatal("no span named message.send")
	}
	for _, s := range sends {
		a := attrs(s)
		if s.Name() != "send" || s.SpanKind() != trace.SpanKindProducer {
			t.Errorf("message span %q kind %v, want send, producer", s.Name(), s.SpanKind())
		}
		if s.Parent().SpanID() != call.SpanContext().SpanID() {
			t.Errorf("message span's parent %v, want the call's span %v", s.Parent().SpanID(), call.SpanContext().SpanID())
		}
		env, ok := mem.Envelope(a["messaging.message.id"].AsString())
		if !ok {
			t.Errorf("message span's messaging.message.id %v is no send id the transport got", a["messaging.message.id"])
			continue
		}
		if a["messaging.system"].AsString() != "smtp" || a["postroom.outcome"].AsString() != "sent" ||
			a["messaging.message.body.size"].AsInt64() != int64(len(env.Data)) || a["postroom.envelope.recipients"].AsInt64() != 1 {
			t.Errorf("message span attributes %v, want smtp, sent, %d octets, 1 address", a, len(env.Data))
		}
	}
	if n := sum(t, k.metrics(t)["messaging.client.sent.messages"], attribute.String("postroom.outcome", "sent")); n != 2 {
		t.Errorf("messaging.client.sent.messages = %d, want 2 (counted once, span or not)", n)
	}

	k.spans.Reset()
	if _, err := k.tel.Send(t.Context(), m, receipt("ann@example.com", "bob@example.net", "cy@example.org")); err != nil {
		t.Fatal(err)
	}
	if spans := k.spans.GetSpans().Snapshots(); len(spans) != 1 {
		t.Errorf("a call of 3 over the limit of 2: %d spans, want the call's alone", len(spans))
	}
}

// spool is a pickup folder that delivers later: a Queuer.
type spool struct{ *transport.Dir }

func (spool) Queued() bool { return true }

func TestTransportKeepsQueuer(t *testing.T) {
	dir, err := transport.NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	k := newKit(t)
	for _, c := range []struct {
		name string
		tr   postroom.Transport
		want postroom.Status
	}{{"queuer", spool{dir}, postroom.StatusQueued}, {"plain", dir, postroom.StatusSent}} {
		t.Run(c.name, func(t *testing.T) {
			w := k.tel.Transport(c.tr)
			if _, ok := w.(postroom.Queuer); ok != (c.want == postroom.StatusQueued) {
				t.Errorf("wrapper is a Queuer: %v, want %v", ok, !ok)
			}
			if u, ok := w.(interface{ Unwrap() postroom.Transport }); !ok || u.Unwrap() != c.tr {
				t.Errorf("wrapper's Unwrap does not return the transport")
			}
			results, err := k.tel.Send(t.Context(), newMailer(t, w, postroom.Options{}), receipt("ann@example.com"))
			if err != nil || results[0].Status != c.want {
				t.Fatalf("results %+v, %v, want %s", results, err, c.want)
			}
		})
	}
}

// TestTransportFailure sends to a relay that refuses the recipient:
// outside Run (as the outbox's worker does) the message gets a span with
// the reply's codes and its measurements at once; under Run the call's
// span counts the rejected recipient.
func TestTransportFailure(t *testing.T) {
	k := newKit(t)
	// A relay that refuses every recipient for good, as transport.SMTP
	// reports a 550 reply.
	refuse := postroom.TransportFunc(func(ctx context.Context, env *postroom.Envelope) error {
		return &postroom.DeliveryError{Kind: postroom.DeliveryPermanent, Code: 550, Enhanced: "5.1.1", Text: "user unknown"}
	})
	m := newMailer(t, k.tel.Transport(refuse), postroom.Options{OnEvent: k.tel.OnEvent})
	results, err := m.Send(t.Context(), receipt("gone@example.com"))
	if err != nil || results[0].Status != postroom.StatusRejected {
		t.Fatalf("results %+v, %v, want rejected", results, err)
	}
	spans := k.spans.GetSpans().Snapshots()
	if len(spans) != 1 || spans[0].Name() != "send" {
		t.Fatalf("spans %v, want the message's alone", spans)
	}
	send := spans[0]
	a := attrs(send)
	if send.Status().Code != codes.Error || a["error.type"].AsString() != "permanent" || a["postroom.outcome"].AsString() != "permanent" ||
		a["postroom.smtp.code"].AsInt64() != 550 || a["postroom.smtp.enhanced"].AsString() != "5.1.1" {
		t.Errorf("message span status %v attributes %v, want an error, permanent, 550 5.1.1", send.Status(), a)
	}
	ms := k.metrics(t)
	dur, ok := ms["messaging.client.operation.duration"].(metricdata.Histogram[float64])
	if !ok || len(dur.DataPoints) != 1 || dur.DataPoints[0].Count != 1 || !hasAll(dur.DataPoints[0].Attributes, []attribute.KeyValue{attribute.String("error.type", "permanent")}) {
		t.Errorf("messaging.client.operation.duration %+v, want 1 hand-over, error.type permanent", ms["messaging.client.operation.duration"])
	}
	if n := sum(t, ms["messaging.client.sent.messages"], attribute.String("postroom.outcome", "permanent"), attribute.String("error.type", "permanent")); n != 1 {
		t.Errorf("messaging.client.sent.messages permanent = %d, want 1", n)
	}
	if n := sum(t, ms["postroom.events"], attribute.String("postroom.event", "hard_bounce"), attribute.String("postroom.reason", "hard-bounce")); n != 1 {
		t.Errorf("postroom.events hard_bounce = %d, want 1", n)
	}

	k.spans.Reset()
	if _, err := k.tel.Send(t.Context(), m, receipt("gone@example.com")); err != nil {
		t.Fatal(err)
	}
	spans = k.spans.GetSpans().Snapshots()
	if len(spans) != 1 || attrs(spans[0])["postroom.recipients.rejected"].AsInt64() != 1 || spans[0].Status().Code == codes.Error {
		t.Fatalf("spans %v, want the call's alone, 1 rejected, not an error (the call ran)", spans)
	}
	ms = k.metrics(t)
	if n := sum(t, ms["postroom.recipients"], attribute.String("postroom.status", "rejected"), attribute.String("postroom.reason", "hard-bounce")); n != 1 {
		t.Errorf("postroom.recipients rejected, hard-bounce = %d, want 1", n)
	}
	if n := sum(t, ms["postroom.events"], attribute.String("postroom.event", "hard_bounce"), attribute.String("postroom.reason", "hard-bounce")); n != 2 {
		t.Errorf("postroom.events hard_bounce = %d, want 2 (one outside Run, one in it)", n)
	}
}

func TestRunRefusedCall(t *testing.T) {
	k := newKit(t)
	m := newMailer(t, k.tel.Transport(transport.NewMemory()), postroom.Options{})
	_, err := k.tel.Send(t.Context(), m, receipt())
	if !errors.Is(err, postroom.ErrNoRecipients) {
		t.Fatalf("err %v, want ErrNoRecipients", err)
	}
	spans := k.spans.GetSpans().Snapshots()
	if len(spans) != 1 || spans[0].Status().Code != codes.Error || attrs(spans[0])["error.type"].AsString() != "refused" {
		t.Fatalf("spans %v, want the call's alone, refused", spans)
	}
}

// TestLargeCallTimed: the messages of a call are counted all and timed
// the first and one in 16 of the others, those whose send id ends in 0.
// One worker hands them over, so that the memory transport's first
// envelope is the call's first message.
func TestLargeCallTimed(t *testing.T) {
	k := newKit(t)
	mem := transport.NewMemory()
	m := newMailer(t, k.tel.Transport(mem), postroom.Options{OnEvent: k.tel.OnEvent, Concurrency: 1})
	emails := make([]string, 160)
	for i := range emails {
		emails[i] = fmt.Sprintf("c%d@example.com", i)
	}
	if _, err := k.tel.Send(t.Context(), m, receipt(emails...)); err != nil {
		t.Fatal(err)
	}
	got := k.spans.GetSpans().Snapshots()
	if len(got) != 1 || got[0].Name() != "message.send" || attrs(got[0])["postroom.recipients.sent"].AsInt64() != 160 {
		t.Fatalf("spans %v, want the call's alone, 160 sent", got)
	}
	bytes := int64(0)
	for _, env := range mem.Envelopes() {
		bytes += int64(len(env.Data))
	}
	ms := k.metrics(t)
	if n := sum(t, ms["messaging.client.sent.messages"], attribute.String("postroom.outcome", "sent")); n != 160 {
		t.Errorf("messaging.client.sent.messages = %d, want 160", n)
	}
	if n := sum(t, ms["postroom.message.bytes"], attribute.String("postroom.outcome", "sent")); n != bytes {
		t.Errorf("postroom.message.bytes = %d, want %d", n, bytes)
	}
	if n := sum(t, ms["postroom.events"], attribute.String("postroom.event", "send")); n != 160 {
		t.Errorf("postroom.events send = %d, want 160", n)
	}
	want := uint64(0)
	for i, env := range mem.Envelopes() {
		if i == 0 || strings.HasSuffix(env.SendID, "0") {
			want++
		}
	}
	var count uint64
	if dur, ok := ms["messaging.client.operation.duration"].(metricdata.Histogram[float64]); ok && len(dur.DataPoints) == 1 {
		count = dur.DataPoints[0].Count
	}
	if count != want || want == 160 {
		t.Errorf("messaging.client.operation.duration counts %d messages, want %d (the first and those whose send id ends in 0)", count, want)
	}
}

// TestFirstMessageTimed: the first message of each call is timed,
// whatever its send id, so that a run of one call shows a latency. Of 32
// one-recipient calls, all 32 are timed (one in 16 would time about 2);
// of two-recipient calls, the first message of each and the second only
// when its send id ends in 0.
func TestFirstMessageTimed(t *testing.T) {
	durationCount := func(t *testing.T, k *kit) uint64 {
		t.Helper()
		dur, ok := k.metrics(t)["messaging.client.operation.duration"].(metricdata.Histogram[float64])
		if !ok || len(dur.DataPoints) != 1 {
			return 0
		}
		return dur.DataPoints[0].Count
	}
	t.Run("one recipient", func(t *testing.T) {
		k := newKit(t)
		mem := transport.NewMemory()
		m := newMailer(t, k.tel.Transport(mem), postroom.Options{})
		const calls = 32
		for range calls {
			if _, err := k.tel.Send(t.Context(), m, receipt("ann@example.com")); err != nil {
				t.Fatal(err)
			}
		}
		untimedIDs := 0
		for _, env := range mem.Envelopes() {
			if !strings.HasSuffix(env.SendID, "0") {
				untimedIDs++
			}
		}
		if untimedIDs == 0 {
			t.Fatal("every send id ends in 0: the test shows nothing")
		}
		if n := durationCount(t, k); n != calls {
			t.Errorf("messaging.client.operation.duration counts %d messages, want %d (each call's first)", n, calls)
		}
	})
	t.Run("two recipients", func(t *testing.T) {
		// One worker: each call's first envelope is its first message.
		k := newKit(t)
		mem := transport.NewMemory()
		m := newMailer(t, k.tel.Transport(mem), postroom.Options{Concurrency: 1})
		for range 32 {
			if _, err := k.tel.Send(t.Context(), m, receipt("ann@example.com", "bob@example.net")); err != nil {
				t.Fatal(err)
			}
		}
		envs := mem.Envelopes()
		if len(envs) != 64 {
			t.Fatalf("%d envelopes, want 64", len(envs))
		}
		want := uint64(0)
		for i, env := range envs {
			if i%2 == 0 || strings.HasSuffix(env.SendID, "0") {
				want++
			}
		}
		if n := durationCount(t, k); n != want || want == 64 {
			t.Errorf("messaging.client.operation.duration counts %d messages, want %d (each call's first and the others whose send id ends in 0)", n, want)
		}
	})
}

// TestCountersAcrossCollections: the counters are kept by the
// Telemetry and observed at each collection: a cumulative reader gets
// the totals, a delta reader what came since its last collection, and
// two Telemetries of one meter provider add up.
func TestCountersAcrossCollections(t *testing.T) {
	delta := func(sdkmetric.InstrumentKind) metricdata.Temporality { return metricdata.DeltaTemporality }
	for _, c := range []struct {
		name   string
		opts   []sdkmetric.ManualReaderOption
		second int64 // postroom.events send at the second collection
	}{{"cumulative", nil, 3}, {"delta", []sdkmetric.ManualReaderOption{sdkmetric.WithTemporalitySelector(delta)}, 1}} {
		t.Run(c.name, func(t *testing.T) {
			k := newKitWith(t, postroomotel.Options{}, c.opts...)
			m := newMailer(t, k.tel.Transport(transport.NewMemory()), postroom.Options{OnEvent: k.tel.OnEvent})
			if _, err := k.tel.Send(t.Context(), m, receipt("ann@example.com", "bob@example.net")); err != nil {
				t.Fatal(err)
			}
			if n := sum(t, k.metrics(t)["postroom.events"], attribute.String("postroom.event", "send")); n != 2 {
				t.Errorf("first collection: postroom.events send = %d, want 2", n)
			}
			if _, err := k.tel.Send(t.Context(), m, receipt("cy@example.org")); err != nil {
				t.Fatal(err)
			}
			if n := sum(t, k.metrics(t)["postroom.events"], attribute.String("postroom.event", "send")); n != c.second {
				t.Errorf("second collection: postroom.events send = %d, want %d", n, c.second)
			}
		})
	}

	t.Run("two telemetries", func(t *testing.T) {
		k := newKit(t)
		// A second Telemetry on the kit's meter provider: the reader's
		// instruments are the same, and their observations add up.
		tel2, err := postroomotel.New(postroomotel.Options{TracerProvider: k.tp, MeterProvider: k.mp})
		if err != nil {
			t.Fatal(err)
		}
		for _, tel := range []*postroomotel.Telemetry{k.tel, tel2} {
			m := newMailer(t, tel.Transport(transport.NewMemory()), postroom.Options{OnEvent: tel.OnEvent})
			if _, err := tel.Send(t.Context(), m, receipt("ann@example.com")); err != nil {
				t.Fatal(err)
			}
		}
		if n := sum(t, k.metrics(t)["messaging.client.sent.messages"], attribute.String("postroom.outcome", "sent")); n != 2 {
			t.Errorf("messaging.client.sent.messages = %d, want 2 (one per Telemetry)", n)
		}
	})
}

// TestLabelOverflow: past 256 labels of postroom.events, an event is
// counted under otel.metric.overflow=true, not dropped.
func TestLabelOverflow(t *testing.T) {
	k := newKit(t)
	for i := range 300 {
		k.tel.OnEvent(t.Context(), postroom.Event{Type: postroom.EventDeferral, Reason: fmt.Sprintf("reason-%d", i)})
	}
	ev := k.metrics(t)["postroom.events"].(metricdata.Sum[int64])
	total, over := int64(0), int64(0)
	for _, p := range ev.DataPoints {
		total += p.Value
		if v, ok := p.Attributes.Value("otel.metric.overflow"); ok && v.AsBool() {
			over = p.Value
		}
	}
	if total != 300 || over == 0 || len(ev.DataPoints) > 257 {
		t.Errorf("postroom.events: %d points, total %d, overflow %d; want at most 257 points, all 300 counted, some in overflow", len(ev.DataPoints), total, over)
	}
}
