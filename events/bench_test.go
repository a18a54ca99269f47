package events_test

import (
	"fmt"
	"testing"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/events"
)

// BenchmarkAfter is what a done call of 25,000 recipients costs an
// outbox's Status with outbox.Options.Events: one After for its 25,000
// send ids, in a log holding their send events and a bounce for one in
// twenty-five.
func BenchmarkAfter(b *testing.B) {
	const n = 25_000
	s, _ := newSQL(b, events.SQLOptions{})
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
