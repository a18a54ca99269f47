package events_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/events"
	"github.com/postroom/postroom/internal/testkit/dbtest"
)

// TestRotate: Rotate removes the events older than the retention and
// keeps the others, on each engine; run again, it changes nothing. On
// PostgreSQL it creates the partitions of the days ahead, moving into a
// new day the events the default partition held for it, and drops whole
// the days older than the retention, the partition of the events written
// before partitioning included.
func TestRotate(t *testing.T) { onEachEngine(t, testRotate) }

func testRotate(t *testing.T, engine dbtest.Engine) {
	ctx := t.Context()
	today := time.Now().UTC().Truncate(24 * time.Hour)
	s, pool := newSQL(t, engine, events.SQLOptions{Retention: 48 * time.Hour})
	pg := engine.Name == "postgres"
	at := []time.Time{today.AddDate(0, 0, -10), today.Add(time.Hour), today.AddDate(0, 0, 3), today.AddDate(0, 0, 20).Add(time.Hour)}
	var evs []postroom.Event
	for i, a := range at {
		evs = append(evs, postroom.Event{Type: postroom.EventSend, SendID: id(i), AccountID: "a", Email: "ann@example.org", At: a})
	}
	if err := s.Record(ctx, evs); err != nil {
		t.Fatal(err)
	}
	var inDefault int
	if pg {
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM postroom_events_default`).Scan(&inDefault); err != nil || inDefault != 1 {
			t.Fatalf("default partition: %d rows (%v), want the one 20 days ahead", inDefault, err)
		}
	}

	later := today.AddDate(0, 0, 20).Add(2 * time.Hour)
	dropped, err := s.Rotate(ctx, later)
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := s.List(ctx, "a", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].SendID != id(3) || !got[0].At.Equal(at[3]) {
		t.Errorf("after Rotate, List = %+v; want the event of 20 days ahead alone", got)
	}
	if dropped, err := s.Rotate(ctx, later); err != nil || len(dropped) != 0 || count(t, pool) != 1 {
		t.Errorf("Rotate again: dropped %v, %v, %d events left; want nothing dropped, 1 left", dropped, err, count(t, pool))
	}
	if err := s.Record(ctx, evs[3:]); err != nil {
		t.Fatal(err)
	}
	if got, _, err := s.List(ctx, "a", "", 0); err != nil || len(got) != 2 {
		t.Errorf("a new event after Rotate: List = %d events, %v", len(got), err)
	}
	if !pg {
		if len(dropped) != 0 {
			t.Errorf("SQLite: dropped %v, want no partition", dropped)
		}
		return
	}

	slices.Sort(dropped)
	if len(dropped) < 9 || !strings.HasSuffix(dropped[1], "_before") || dropped[0] != "postroom_events_p"+today.Format("20060102") {
		t.Errorf("dropped %v; want the partition of the events before partitioning and the days from today on that Migrate made", dropped)
	}
	var parts []string
	rows, err := pool.Query(ctx, `SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'postroom_events'::regclass ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		parts = append(parts, n)
	}
	if rows.Err() != nil {
		t.Fatal(rows.Err())
	}
	want := []string{"postroom_events_default"}
	for d := 20; d <= 20+events.RotateAhead; d++ {
		want = append(want, "postroom_events_p"+today.AddDate(0, 0, d).Format("20060102"))
	}
	if !slices.Equal(parts, want) {
		t.Errorf("partitions %v; want %v", parts, want)
	}
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM postroom_events_default`).Scan(&inDefault); err != nil || inDefault != 0 {
		t.Errorf("default partition: %d rows (%v), want none: moved into its day", inDefault, err)
	}
}
