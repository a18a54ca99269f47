package events_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/events"
	"github.com/postroom/postroom/internal/testkit/bench"
	"github.com/postroom/postroom/internal/testkit/dbtest"
	"github.com/postroom/postroom/sqldb"
)

// newSQL returns an SQL store on a fresh database of engine e, migrated.
func newSQL(t testing.TB, e dbtest.Engine, opts events.SQLOptions) (*events.SQL, sqldb.DB) {
	t.Helper()
	db := e.Open(t)
	if err := events.Migrate(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	s, err := events.NewSQL(db, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s, db
}

// onEachEngine runs test on each engine of SQL (PostgreSQL, SQLite), as
// a subtest named for it.
func onEachEngine(t *testing.T, test func(t *testing.T, e dbtest.Engine)) {
	for _, e := range dbtest.Engines() {
		t.Run(e.Name, func(t *testing.T) { test(t, e) })
	}
}

// count returns the rows of postroom_events.
func count(t testing.TB, db sqldb.DB) int {
	t.Helper()
	var n int
	if err := db.QueryRow(context.Background(), `SELECT count(*) FROM postroom_events`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestMigrateConcurrently(t *testing.T) {
	onEachEngine(t, func(t *testing.T, e dbtest.Engine) {
		db := e.Open(t)
		var wg sync.WaitGroup
		errs := make([]error, 4)
		for i := range errs {
			wg.Go(func() { errs[i] = events.Migrate(t.Context(), db) })
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
		var versions int
		if err := db.QueryRow(t.Context(), `SELECT count(*) FROM postroom_events_schema`).Scan(&versions); err != nil || versions < 1 {
			t.Errorf("%d versions recorded (%v)", versions, err)
		}
		if e.Name == "postgres" && versions != events.SQLSchemaVersion {
			t.Errorf("%d versions recorded, want %d", versions, events.SQLSchemaVersion)
		}
	})
}

func TestSQLRecordListSend(t *testing.T) { onEachEngine(t, testSQLRecordListSend) }

func testSQLRecordListSend(t *testing.T, engine dbtest.Engine) {
	now := time.Date(2026, 11, 28, 5, 0, 0, 0, time.UTC)
	s, _ := newSQL(t, engine, events.SQLOptions{SendWindow: 23*time.Hour + 30*time.Minute, Now: func() time.Time { return now }})
	ctx := t.Context()
	var evs []postroom.Event
	for i := range 25 {
		acct := "a"
		if i%5 == 4 {
			acct = "b"
		}
		evs = append(evs, postroom.Event{Type: postroom.EventSend, SendID: id(i), AccountID: acct, Email: fmt.Sprintf("u%d@example.net", i), At: now.Add(-time.Duration(i) * time.Hour)})
	}
	if err := s.Record(ctx, evs); err != nil {
		t.Fatal(err)
	}
	if err := s.Record(ctx, []postroom.Event{{Type: postroom.EventHardBounce, SendID: id(0), AccountID: "a", Email: "u0@example.net", Reason: "user-unknown", Status: "5.1.1", Diagnostic: "550 5.1.1 no such user"}}); err != nil {
		t.Fatal(err)
	}

	// Account a, by pages of 7: its 20 sends, then the bounce, in order.
	var got []postroom.Event
	cursor := ""
	for pages := 0; ; pages++ {
		page, next, err := s.List(ctx, "a", cursor, 7)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			if next != cursor {
				t.Errorf("an empty page moved the cursor from %q to %q", cursor, next)
			}
			break
		}
		got = append(got, page...)
		cursor = next
		if pages > 10 {
			t.Fatal("List does not end")
		}
	}
	if len(got) != 21 {
		t.Fatalf("account a: %d events, want 21", len(got))
	}
	last := got[20]
	if last.Type != postroom.EventHardBounce || last.Reason != "user-unknown" || last.Status != "5.1.1" || last.AccountID != "a" || !last.At.Equal(now) {
		t.Errorf("last event %+v", last)
	}
	for i, e := range got[:20] {
		if e.AccountID != "a" || e.Type != postroom.EventSend {
			t.Errorf("event %d: %+v", i, e)
		}
	}
	if _, _, err := s.List(ctx, "a", "nonsense", 0); !errors.Is(err, events.ErrBadCursor) {
		t.Errorf("List with a bad cursor: %v, want ErrBadCursor", err)
	}

	// After: the latest later event per send id, sends left out.
	if err := s.Record(ctx, []postroom.Event{{Type: postroom.EventDeferral, SendID: id(3), AccountID: "a", Email: "u3@example.net", At: now.Add(-time.Minute)}}); err != nil {
		t.Fatal(err)
	}
	later, err := s.After(ctx, []string{id(0), id(3), id(5), "junk"})
	if err != nil {
		t.Fatal(err)
	}
	if len(later) != 2 || later[id(0)].Type != postroom.EventHardBounce || later[id(0)].Status != "5.1.1" || later[id(3)].Type != postroom.EventDeferral {
		t.Errorf("After = %+v", later)
	}

	// Lookup: found within SendWindow (23.5 h), by send events only.
	for _, tc := range []struct {
		n     int
		found bool
	}{{0, true}, {3, true}, {23, true}, {24, false}} {
		snd, ok, err := s.Lookup(ctx, id(tc.n))
		if err != nil || ok != tc.found {
			t.Errorf("Send(%d) = %+v, %v, %v; want found %v", tc.n, snd, ok, err, tc.found)
		}
		if ok && snd.Email != fmt.Sprintf("u%d@example.net", tc.n) {
			t.Errorf("Send(%d).Email = %s", tc.n, snd.Email)
		}
	}
}

func TestRecorder(t *testing.T) { onEachEngine(t, testRecorder) }

func testRecorder(t *testing.T, engine dbtest.Engine) {
	s, db := newSQL(t, engine, events.SQLOptions{})
	r, err := s.NewRecorder(events.RecorderOptions{FlushEvents: 10, FlushAfter: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	count := func() int { return count(t, db) }
	var wg sync.WaitGroup
	for i := range 25 {
		wg.Go(func() {
			r.OnEvent(t.Context(), postroom.Event{Type: postroom.EventSend, SendID: id(i), AccountID: "a", Email: "u@example.net"})
		})
	}
	wg.Wait()
	// 25 events at 10 a batch: 20 written by OnEvent, 5 buffered.
	if n := count(); n != 20 {
		t.Errorf("%d events written before Flush, want 20", n)
	}
	if err := r.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 25 {
		t.Errorf("%d events written after Flush, want 25", n)
	}
	// A cancelled call's events are still written.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	for i := range 10 {
		r.OnEvent(ctx, postroom.Event{Type: postroom.EventSend, SendID: id(100 + i), AccountID: "a", Email: "u@example.net"})
	}
	if n := count(); n != 35 {
		t.Errorf("%d events written after a cancelled call's batch, want 35", n)
	}
	// Each event written once, as given, though the batches' arrays are
	// reused for the events that follow them.
	var ids []string
	rows, err := db.Query(t.Context(), `SELECT send_id FROM postroom_events ORDER BY send_id`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		t.Fatal(err)
	}
	want := make([]string, 0, 35)
	for i := range 25 {
		want = append(want, id(i))
	}
	for i := range 10 {
		want = append(want, id(100+i))
	}
	if !slices.Equal(ids, want) {
		t.Errorf("send ids written %q, want %q", ids, want)
	}
}

func TestRecorderKeepsEventsWhenTheDatabaseFails(t *testing.T) {
	onEachEngine(t, testRecorderKeepsEventsWhenTheDatabaseFails)
}

func testRecorderKeepsEventsWhenTheDatabaseFails(t *testing.T, engine dbtest.Engine) {
	s, pool := newSQL(t, engine, events.SQLOptions{})
	r, err := s.NewRecorder(events.RecorderOptions{FlushEvents: 1000})
	if err != nil {
		t.Fatal(err)
	}
	r.OnEvent(t.Context(), postroom.Event{Type: postroom.EventSend, SendID: id(1), AccountID: "a", Email: "u@example.net"})
	if _, err := pool.Exec(t.Context(), `ALTER TABLE postroom_events RENAME TO away`); err != nil {
		t.Fatal(err)
	}
	if err := r.Flush(t.Context()); err == nil {
		t.Fatal("Flush with the table gone returned nil")
	}
	if _, err := pool.Exec(t.Context(), `ALTER TABLE away RENAME TO postroom_events`); err != nil {
		t.Fatal(err)
	}
	if err := r.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.Lookup(t.Context(), id(1)); !ok || err != nil {
		t.Errorf("the event kept after a failed write was not written by the next Flush: %v, %v", ok, err)
	}
}

// BenchmarkRecord measures one Record of 25,000 send events (a
// 25,000-recipient call's) on each engine, beside the obvious INSERT per
// event: PostgreSQL's COPY, SQLite's multi-row INSERTs in a transaction.
func BenchmarkRecord(b *testing.B) {
	for _, e := range dbtest.Engines() {
		b.Run(e.Name, func(b *testing.B) { benchmarkRecord(b, e) })
	}
}

func benchmarkRecord(b *testing.B, engine dbtest.Engine) {
	s, pool := newSQL(b, engine, events.SQLOptions{})
	evs := make([]postroom.Event, 25_000)
	for i := range evs {
		evs[i] = postroom.Event{Type: postroom.EventSend, SendID: id(i), AccountID: "a", Email: fmt.Sprintf("u%d@example.net", i), At: time.Now(),
			CallID: "0123456789abcdef0123456789abcdef", From: "orders@shop.example.com", Subject: fmt.Sprintf("Your order %d", i)}
	}
	b.Run("record", func(b *testing.B) {
		b.ReportAllocs()
		cpu := bench.MeasureCPU()
		for b.Loop() {
			if err := s.Record(context.Background(), evs); err != nil {
				b.Fatal(err)
			}
		}
		cpu(b, 1e6, "cpu-ms/record")
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e6, "ms/record")
	})
	if engine.Name != "postgres" {
		return // SQLite's INSERT per event takes 10 s a call
	}
	b.Run("insert-per-event", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, e := range evs {
				if _, err := pool.Exec(context.Background(), `INSERT INTO postroom_events (account_id, event, send_id, email, at) VALUES ($1, $2, $3, $4, $5)`,
					e.AccountID, string(e.Type), e.SendID, e.Email, e.At); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e6, "ms/record")
	})
}

// TestSQLRoundTrip: what a Recorder writes reads back field for field,
// the list included, from List, After and Send, for list mail and
// transactional mail alike.
func TestSQLRoundTrip(t *testing.T) { onEachEngine(t, testSQLRoundTrip) }

func testSQLRoundTrip(t *testing.T, engine dbtest.Engine) {
	at := time.Date(2026, 11, 28, 5, 0, 0, 0, time.UTC)
	s, _ := newSQL(t, engine, events.SQLOptions{Now: func() time.Time { return at.Add(time.Hour) }})
	r, err := s.NewRecorder(events.RecorderOptions{FlushAfter: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	const news = "news.shop.example.com"
	in := []postroom.Event{
		{Type: postroom.EventSend, SendID: id(1), AccountID: "a", Email: "ann@example.net", List: news, At: at,
			CallID: "c1", From: "news@shop.example.com", Subject: "Deals for Ann", HTMLTemplateID: "deals", TextTemplateID: "deals-text"},
		{Type: postroom.EventSend, SendID: id(2), AccountID: "a", Email: "bob@example.net", At: at},
		{Type: postroom.EventHardBounce, SendID: id(1), AccountID: "a", Email: "ann@example.net", Reason: "user-unknown", Status: "5.1.1", Diagnostic: "550 5.1.1 no such user", List: news, At: at.Add(time.Minute)},
		{Type: postroom.EventSpam, SendID: id(2), AccountID: "a", Email: "bob@example.net", Reason: "complaint", At: at.Add(2 * time.Minute)},
	}
	for _, e := range in {
		r.OnEvent(t.Context(), e)
	}
	if err := r.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	got, _, err := s.List(t.Context(), "a", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(in) {
		t.Fatalf("List: %d events, want %d", len(got), len(in))
	}
	for i := range in {
		if !same(got[i], in[i]) {
			t.Errorf("List[%d] = %+v, want %+v", i, got[i], in[i])
		}
	}
	later, err := s.After(t.Context(), []string{id(1), id(2)})
	if err != nil {
		t.Fatal(err)
	}
	if !same(later[id(1)], in[2]) || !same(later[id(2)], in[3]) {
		t.Errorf("After = %+v, want the bounce and the complaint as recorded", later)
	}
	for _, e := range in[:2] {
		snd, ok, err := s.Lookup(t.Context(), e.SendID)
		want := events.Send{ID: e.SendID, AccountID: e.AccountID, Email: e.Email, List: e.List, At: e.At}
		if err != nil || !ok || !snd.At.Equal(want.At) || snd.ID != want.ID || snd.AccountID != want.AccountID || snd.Email != want.Email || snd.List != want.List {
			t.Errorf("Send(%s) = %+v, %v, %v; want %+v", e.SendID, snd, ok, err, want)
		}
	}
}

// same reports whether a and b are the same event, their times compared
// as instants (the database gives them back in its time zone).
func same(a, b postroom.Event) bool {
	if !a.At.Equal(b.At) {
		return false
	}
	a.At, b.At = time.Time{}, time.Time{}
	return a == b
}
