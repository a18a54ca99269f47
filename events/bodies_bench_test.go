package events_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/events"
	"github.com/postroom/postroom/internal/testkit/dbtest"
	"github.com/postroom/postroom/internal/testkit/fixture"
)

// BenchmarkKeepBodies sends the workload's call (1,000 recipients) through
// a Mailer whose transport is KeepBodies around one that discards, with
// bodies kept on each engine, and reports the rendered size of a message
// (body-B/msg) and what postroom_event_bodies takes per message with its index
// (stored-B/msg; PostgreSQL's TOAST compresses the bodies, SQLite does
// not).
func BenchmarkKeepBodies(b *testing.B) {
	const n = 1000
	for _, e := range dbtest.Engines() {
		for _, keep := range []time.Duration{0, 24 * time.Hour} {
			name := e.Name + "/off"
			if keep > 0 {
				name = e.Name + "/on"
			}
			b.Run(name, func(b *testing.B) {
				s, db := newSQL(b, e, events.SQLOptions{KeepBodies: keep})
				var bytes, msgs atomic.Int64
				discard := postroom.TransportFunc(func(_ context.Context, env *postroom.Envelope) error {
					bytes.Add(int64(len(env.Data)))
					msgs.Add(1)
					return nil
				})
				m, err := postroom.New(events.KeepBodies(discard, s, events.KeepBodiesOptions{OnError: func(_ context.Context, _ string, err error) { b.Error(err) }}),
					postroom.Options{Auth: postroom.NoAuth{}})
				if err != nil {
					b.Fatal(err)
				}
				call := fixture.Shared(b).Call(n)
				for b.Loop() {
					if _, err := m.Send(b.Context(), call); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(bytes.Load())/float64(msgs.Load()), "body-B/msg")
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(msgs.Load()), "ns/msg")
				if keep > 0 {
					q := `SELECT pg_total_relation_size('postroom_event_bodies'), (SELECT count(*) FROM postroom_event_bodies)`
					if e.Name == "sqlite" {
						q = `SELECT (SELECT sum(pgsize) FROM dbstat WHERE name LIKE 'postroom_event_bodies%'), (SELECT count(*) FROM postroom_event_bodies)`
					}
					var size, rows int64
					if err := db.QueryRow(b.Context(), q).Scan(&size, &rows); err != nil {
						b.Fatal(err)
					}
					b.ReportMetric(float64(size)/float64(rows), "stored-B/msg")
				}
			})
		}
	}
}
