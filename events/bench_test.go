package events_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/events"
	"github.com/postroom/postroom/internal/testkit/dbtest"
)

// BenchmarkAfter is what a done call of 25,000 recipients costs an
// outbox's Status with outbox.Options.Events: one After for its 25,000
// send ids, in a log holding their send events and a bounce for one in
// twenty-five.
func BenchmarkAfter(b *testing.B) {
	const n = 25_000
	s, _ := newSQL(b, dbtest.Engine{Name: "postgres", Open: dbtest.Postgres}, events.SQLOptions{})
	ids := make([]string, n)
	evs := make([]postroom.Event, 0, n+n/25)
	for i := range ids {
		ids[i] = fmt.Sprintf("%032x", i)
		evs = append(evs, postroom.Event{Type: postroom.EventSend, SendID: ids[i], AccountID: "acct", Email: fmt.Sprintf("r%d@example.org", i)})
		if i%25 == 0 {
			evs = append(evs, postroom.Event{Type: postroom.EventHardBounce, SendID: ids[i], AccountID: "acct", Email: fmt.Sprintf("r%d@example.org", i), Reason: "user-unknown", Status: "5.1.1"})
		}
	}
	if err := s.Record(b.Context(), evs); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		got, err := s.After(b.Context(), ids)
		if err != nil {
			b.Fatal(err)
		}
		if len(got) != n/25 {
			b.Fatalf("%d later events, want %d", len(got), n/25)
		}
	}
}

// BenchmarkRecorder is the Recorder's write path as a Mailer drives it:
// the send events of a 25,000-recipient call given to OnEvent one by
// one, written by COPYs of DefaultFlushEvents, then Flush. "list" is a
// list call's (each event carries the call's list id), "transactional"
// a call without one. Run it for a fixed count (-benchtime=Nx), so that
// the versions compared write the same number of rows into a table
// that grows.
func BenchmarkRecorder(b *testing.B) {
	const n = 25_000
	for _, list := range []string{"", "news.shop.example.com"} {
		name := "transactional"
		if list != "" {
			name = "list"
		}
		b.Run(name, func(b *testing.B) {
			s, _ := newSQL(b, dbtest.Engine{Name: "postgres", Open: dbtest.Postgres}, events.SQLOptions{})
			r, err := s.NewRecorder(events.RecorderOptions{FlushAfter: time.Hour})
			if err != nil {
				b.Fatal(err)
			}
			evs := make([]postroom.Event, n)
			for i := range evs {
				evs[i] = postroom.Event{Type: postroom.EventSend, SendID: id(i), AccountID: "acct", Email: fmt.Sprintf("r%d@example.org", i), At: time.Now()}
				evs[i].List = list
			}
			b.ReportAllocs()
			for b.Loop() {
				for _, e := range evs {
					r.OnEvent(b.Context(), e)
				}
				if err := r.Flush(b.Context()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
