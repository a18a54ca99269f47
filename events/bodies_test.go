package events_test

import (
	"bytes"
	"context"
	"sync"
	"testing"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/events"
	"github.com/postroom/postroom/internal/testkit/dbtest"
	"github.com/postroom/postroom/sqldb"
	"github.com/postroom/postroom/transport"
)

// bodyStore is a store that keeps bodies, fed with events, and its
// table's row count (-1 for Memory, which has none).
type bodyStore struct {
	events.BodyKeeper
	body   func(ctx context.Context, accountID, sendID string) ([]byte, bool, error)
	record func(t *testing.T, evs []postroom.Event)
	rotate func(t *testing.T, now time.Time)
	rows   func(t *testing.T) int
}

// bodyStores returns a Memory and an SQL store on each engine keeping
// bodies for keep, with the clock *now.
func bodyStores(t *testing.T, keep time.Duration, now *time.Time) map[string]bodyStore {
	t.Helper()
	clock := func() time.Time { return *now }
	m, err := events.NewMemory(events.MemoryOptions{KeepBodies: keep, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	stores := map[string]bodyStore{"memory": {
		BodyKeeper: m, body: m.Body,
		record: memoryStore{m}.record,
		rotate: func(*testing.T, time.Time) {},
		rows:   func(*testing.T) int { return -1 },
	}}
	for _, e := range dbtest.Engines() {
		s, db := newSQL(t, e, events.SQLOptions{KeepBodies: keep, Now: clock})
		stores[e.Name] = bodyStore{
			BodyKeeper: s, body: s.Body,
			record: sqlStore{s}.record,
			rotate: func(t *testing.T, now time.Time) {
				if _, err := s.Rotate(t.Context(), now); err != nil {
					t.Fatal(err)
				}
			},
			rows: func(t *testing.T) int { return countBodies(t, db) },
		}
	}
	return stores
}

func countBodies(t *testing.T, db sqldb.DB) int {
	t.Helper()
	var n int
	if err := db.QueryRow(t.Context(), `SELECT count(*) FROM postroom_event_bodies`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// sendThrough sends one call to two recipients through a real Mailer
// whose transport is KeepBodies around a memory transport, records its
// events in st, and returns the envelopes delivered.
func sendThrough(t *testing.T, st bodyStore) map[string][]byte {
	t.Helper()
	var (
		mu  sync.Mutex
		evs []postroom.Event
	)
	mem := transport.NewMemory()
	var keepErr error
	tr := events.KeepBodies(mem, st, events.KeepBodiesOptions{OnError: func(_ context.Context, _ string, err error) { keepErr = err }})
	m, err := postroom.New(tr, postroom.Options{Auth: postroom.NoAuth{}, OnEvent: func(_ context.Context, e postroom.Event) {
		mu.Lock()
		defer mu.Unlock()
		evs = append(evs, e)
	}})
	if err != nil {
		t.Fatal(err)
	}
	results, err := m.Send(t.Context(), &postroom.Call{AccountID: "shop",
		Message:    postroom.Message{FromEmail: "orders@shop.example.com", Subject: "Your order", Text: "Your order shipped."},
		Recipients: []postroom.Recipient{{Email: "ann@example.com", Name: "Ann"}, {Email: "bob@example.com", Name: "Bob"}}})
	if err != nil {
		t.Fatal(err)
	}
	if keepErr != nil {
		t.Fatalf("KeepBody: %v", keepErr)
	}
	st.record(t, evs)
	delivered := map[string][]byte{}
	for _, env := range mem.Envelopes() {
		delivered[env.SendID] = env.Data
	}
	if len(delivered) != 2 || len(results) != 2 {
		t.Fatalf("%d messages delivered, %d results; want 2", len(delivered), len(results))
	}
	return delivered
}

// TestKeepBodiesOff: with KeepBodies zero (the default), a message sent
// through the KeepBodies transport keeps no body.
func TestKeepBodiesOff(t *testing.T) {
	now := time.Now()
	for name, st := range bodyStores(t, 0, &now) {
		t.Run(name, func(t *testing.T) {
			for id := range sendThrough(t, st) {
				if b, ok, err := st.body(t.Context(), "shop", id); ok || err != nil || b != nil {
					t.Errorf("Body(%s) = %q, %v, %v; want nothing kept", id, b, ok, err)
				}
			}
			if n := st.rows(t); n > 0 {
				t.Errorf("%d bodies in the table, want none", n)
			}
		})
	}
}

// TestKeepBodies: with KeepBodies set, each message's body is the exact
// bytes delivered (not the Mailer's reused buffer), readable by its
// account only; Rotate keeps it while it is younger than KeepBodies and
// deletes it after, and Body no longer returns it then.
func TestKeepBodies(t *testing.T) {
	now := time.Now()
	for name, st := range bodyStores(t, 24*time.Hour, &now) {
		t.Run(name, func(t *testing.T) {
			delivered := sendThrough(t, st)
			var bodies [][]byte
			for id, data := range delivered {
				b, ok, err := st.body(t.Context(), "shop", id)
				if err != nil || !ok || !bytes.Equal(b, data) {
					t.Errorf("Body(%s) = %d bytes, %v, %v; want the %d bytes delivered", id, len(b), ok, err, len(data))
				}
				bodies = append(bodies, b)
				if b, ok, err := st.body(t.Context(), "other", id); ok || err != nil || b != nil {
					t.Errorf("another account reads %s: %d bytes, %v, %v", id, len(b), ok, err)
				}
			}
			if len(bodies) == 2 && bytes.Equal(bodies[0], bodies[1]) {
				t.Error("both messages kept the same body")
			}
			if b, ok, _ := st.body(t.Context(), "shop", "0123456789abcdef0123456789abcdef"); ok {
				t.Errorf("an unknown send id has a body: %q", b)
			}
			st.rotate(t, now.Add(23*time.Hour))
			if n := st.rows(t); n != 2 && n != -1 {
				t.Errorf("after Rotate within KeepBodies: %d bodies, want 2", n)
			}
			st.rotate(t, now.Add(25*time.Hour))
			if n := st.rows(t); n > 0 {
				t.Errorf("after Rotate past KeepBodies: %d bodies, want none", n)
			}
			sent := now
			now = sent.Add(25 * time.Hour)
			defer func() { now = sent }()
			for id := range delivered {
				if b, ok, err := st.body(t.Context(), "shop", id); ok || err != nil {
					t.Errorf("Body(%s) past KeepBodies = %d bytes, %v, %v; want none", id, len(b), ok, err)
				}
			}
		})
	}
}
