//go:build linux

package postroomotel_test

import (
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/postroom/postroom"
	postroomotel "github.com/postroom/postroom/contrib/otel"
	"github.com/postroom/postroom/outbox"
	"github.com/postroom/postroom/sqldb/pgxdb"
	"github.com/postroom/postroom/transport"
)

// gauges returns the outbox's two gauges as collected.
func (k *kit) gauges(t *testing.T) (waiting int64, age float64) {
	t.Helper()
	ms := k.metrics(t)
	w, ok1 := ms["postroom.outbox.waiting"].(metricdata.Gauge[int64])
	a, ok2 := ms["postroom.outbox.oldest_age"].(metricdata.Gauge[float64])
	if !ok1 || !ok2 || len(w.DataPoints) != 1 || len(a.DataPoints) != 1 {
		t.Fatalf("outbox gauges %+v %+v, want one point each", ms["postroom.outbox.waiting"], ms["postroom.outbox.oldest_age"])
	}
	return w.DataPoints[0].Value, a.DataPoints[0].Value
}

func TestOutboxGaugesAndJobSpans(t *testing.T) {
	dsn := startPostgres(t)
	pool, err := pgxpool.New(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if err := outbox.Migrate(t.Context(), pgxdb.New(pool)); err != nil {
		t.Fatal(err)
	}
	k := newKitWith(t, postroomotel.Options{TimeEveryMessage: true})
	mem := transport.NewMemory()
	m := newMailer(t, k.tel.Transport(mem), postroom.Options{OnEvent: k.tel.OnEvent})
	ob, err := outbox.New(m, pgxdb.New(pool), outbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := k.tel.ObserveOutbox(ob)
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Unregister()

	if w, a := k.gauges(t); w != 0 || a != 0 {
		t.Errorf("empty outbox: waiting %d, oldest age %v, want 0, 0", w, a)
	}
	err = pgx.BeginFunc(t.Context(), pool, func(tx pgx.Tx) error {
		_, err := ob.Enqueue(t.Context(), pgxdb.WrapTx(tx), postroom.OpSend, receipt("ann@example.com", "bob@example.net", "cy@example.org"), outbox.EnqueueOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond) // an age above zero
	if w, a := k.gauges(t); w != 3 || a <= 0 {
		t.Errorf("a call of 3 enqueued: waiting %d, oldest age %v, want 3 and above 0", w, a)
	}

	client, err := ob.NewClient(&river.Config{Middleware: []rivertype.Middleware{k.tel.RiverMiddleware()}})
	if err != nil {
		t.Fatal(err)
	}
	if err := client.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for mem.Len() < 3 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if err := client.Stop(t.Context()); err != nil {
		t.Fatal(err)
	}
	if mem.Len() != 3 {
		t.Fatalf("%d messages sent, want 3", mem.Len())
	}
	if w, a := k.gauges(t); w != 0 || a != 0 {
		t.Errorf("worked: waiting %d, oldest age %v, want 0, 0", w, a)
	}

	// River's span of the job's work, a session of hand-overs: the
	// messages' counts on it, no span per message.
	spans := k.spans.GetSpans().Snapshots()
	var work sdktrace.ReadOnlySpan
	for _, s := range spans {
		if strings.HasPrefix(s.Name(), "river.work") {
			work = s
		}
		if s.Name() == "send" {
			t.Errorf("a message span %v in the job's work, want none", s)
		}
	}
	if work == nil {
		t.Fatalf("no river.work span among %d spans", len(spans))
	}
	if n := attrs(work)["postroom.messages.sent"].AsInt64(); n != 3 {
		t.Errorf("job span's postroom.messages.sent = %d, want 3 (attributes %v)", n, attrs(work))
	}
	ms := k.metrics(t)
	if n := sum(t, ms["messaging.client.sent.messages"], attribute.String("postroom.outcome", "sent")); n != 3 {
		t.Errorf("messaging.client.sent.messages = %d, want 3", n)
	}
	if n := sum(t, ms["postroom.events"], attribute.String("postroom.event", "send")); n != 3 {
		t.Errorf("postroom.events send = %d, want 3", n)
	}
	if dur, ok := ms["messaging.client.operation.duration"].(metricdata.Histogram[float64]); !ok || len(dur.DataPoints) != 1 || dur.DataPoints[0].Count != 3 {
		t.Errorf("messaging.client.operation.duration %+v, want 3 hand-overs", ms["messaging.client.operation.duration"])
	}
}
