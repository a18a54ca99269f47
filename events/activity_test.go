package events_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/events"
	"github.com/postroom/postroom/internal/testkit/dbtest"
)

// activityStore is an Activity fed with events.
type activityStore interface {
	events.Activity
	record(t *testing.T, evs []postroom.Event)
}

type memoryStore struct{ *events.Memory }

func (m memoryStore) record(t *testing.T, evs []postroom.Event) {
	for _, e := range evs {
		m.OnEvent(t.Context(), e)
	}
}

type sqlStore struct{ *events.SQL }

func (s sqlStore) record(t *testing.T, evs []postroom.Event) {
	t.Helper()
	if err := s.Record(t.Context(), evs); err != nil {
		t.Fatal(err)
	}
}

// activityStores returns a new Memory and a new SQL store on each
// engine, with a clock at now, by name: "memory", "postgres", "sqlite".
func activityStores(t *testing.T, now time.Time) map[string]activityStore {
	t.Helper()
	clock := func() time.Time { return now }
	m, err := events.NewMemory(events.MemoryOptions{Retention: 365 * 24 * time.Hour, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	stores := map[string]activityStore{"memory": memoryStore{m}}
	for _, e := range dbtest.Engines() {
		s, _ := newSQL(t, e, events.SQLOptions{Now: clock})
		stores[e.Name] = sqlStore{s}
	}
	return stores
}

// searchAll pages through q's results, limit per page, and returns them.
func searchAll(t *testing.T, a events.Activity, q events.Query) []events.Message {
	t.Helper()
	var all []events.Message
	for pages := 0; ; pages++ {
		if pages > 1000 {
			t.Fatal("more than 1000 pages")
		}
		got, next, err := a.Search(t.Context(), q)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, got...)
		if next == "" {
			return all
		}
		if len(got) != max(q.Limit, 1) && q.Limit != 0 {
			t.Fatalf("a page of %d with a next page, limit %d", len(got), q.Limit)
		}
		q.Cursor = next
	}
}

func TestActivity(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 5, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	evs := []postroom.Event{
		{Type: postroom.EventDeferral, SendID: id(1), AccountID: "shop", Email: "Ann@example.org", Reason: "soft-bounce", Status: "4.2.2", Diagnostic: "452 4.2.2 mailbox full", At: at(0)},
		{Type: postroom.EventSend, SendID: id(1), AccountID: "shop", Email: "Ann@example.org", At: at(1)},
		{Type: postroom.EventSend, SendID: id(2), AccountID: "shop", Email: "ann@example.org", List: "news.shop.example.com", At: at(2)},
		{Type: postroom.EventSend, SendID: id(3), AccountID: "shop", Email: "bob@example.org", At: at(3)},
		{Type: postroom.EventReject, AccountID: "shop", Email: "ann@example.org", Reason: "hard-bounce", At: at(4)},
		{Type: postroom.EventSend, SendID: id(4), AccountID: "other", Email: "ann@example.org", At: at(4)},
		{Type: postroom.EventHardBounce, SendID: id(1), AccountID: "shop", Email: "Ann@example.org", Reason: "bad-mailbox", Status: "5.1.1", Diagnostic: "550 5.1.1 no such user", At: at(5)},
		{Type: postroom.EventSpam, SendID: id(2), AccountID: "shop", Email: "ann@example.org", List: "news.shop.example.com", At: at(6)},
	}
	for name, a := range activityStores(t, at(10)) {
		t.Run(name, func(t *testing.T) {
			a.record(t, evs)
			sendIDs := func(ms []events.Message) []string {
				var out []string
				for _, m := range ms {
					out = append(out, m.SendID+":"+string(m.State))
				}
				return out
			}
			for _, c := range []struct {
				name string
				q    events.Query
				want []string
			}{
				{"address in another case", events.Query{Email: "ANN@Example.ORG"}, []string{":rejected", id(2) + ":spam", id(1) + ":bounced"}},
				{"account", events.Query{}, []string{":rejected", id(3) + ":sent", id(2) + ":spam", id(1) + ":bounced"}},
				{"other account", events.Query{AccountID: "other"}, []string{id(4) + ":sent"}},
				{"send id", events.Query{SendID: fmt.Sprintf("%032X", 1)}, []string{id(1) + ":bounced"}},
				{"send id of another account", events.Query{SendID: id(4)}, nil},
				{"list", events.Query{List: "News.Shop.Example.com"}, []string{id(2) + ":spam"}},
				{"state", events.Query{State: events.StateBounced}, []string{id(1) + ":bounced"}},
				{"state sent", events.Query{State: events.StateSent}, []string{id(3) + ":sent"}},
				{"time range", events.Query{From: at(1), To: at(4)}, []string{id(3) + ":sent", id(2) + ":spam"}},
				{"address and state", events.Query{Email: "ann@example.org", State: events.StateRejected}, []string{":rejected"}},
			} {
				t.Run(c.name, func(t *testing.T) {
					if c.q.AccountID == "" {
						c.q.AccountID = "shop"
					}
					for _, limit := range []int{0, 1, 2} {
						c.q.Limit = limit
						if got := sendIDs(searchAll(t, a, c.q)); !reflect.DeepEqual(got, c.want) {
							t.Errorf("limit %d: %v, want %v", limit, got, c.want)
						}
					}
				})
			}

			m, ok, err := a.Info(t.Context(), "shop", id(1))
			if err != nil || !ok {
				t.Fatalf("Info: %v %v", ok, err)
			}
			if m.Email != "Ann@example.org" || !m.Created.Equal(at(0)) || m.State != events.StateBounced || len(m.Timeline) != 3 {
				t.Fatalf("Info: %+v", m)
			}
			for i, want := range []postroom.EventType{postroom.EventDeferral, postroom.EventSend, postroom.EventHardBounce} {
				if e := m.Timeline[i]; e.Type != want || e.SendID != id(1) || e.AccountID != "shop" {
					t.Errorf("timeline[%d]: %+v, want a %s", i, e, want)
				}
			}
			if e := m.Timeline[0]; e.Diagnostic != "452 4.2.2 mailbox full" || e.Status != "4.2.2" || e.Reason != "soft-bounce" {
				t.Errorf("deferral: %+v", e)
			}
			if e := m.Timeline[2]; e.Diagnostic != "550 5.1.1 no such user" || e.Status != "5.1.1" || !e.At.Equal(at(5)) {
				t.Errorf("bounce: %+v", e)
			}
			if _, ok, err := a.Info(t.Context(), "other", id(1)); ok || err != nil {
				t.Errorf("Info of another account's message: %v %v", ok, err)
			}
			if _, ok, err := a.Info(t.Context(), "shop", "nonsense"); ok || err != nil {
				t.Errorf("Info of a bad id: %v %v", ok, err)
			}

			for _, q := range []events.Query{{}, {AccountID: "shop", State: "lost"}, {AccountID: "shop", From: at(2), To: at(1)}, {AccountID: "shop", Limit: -1}} {
				if _, _, err := a.Search(t.Context(), q); !errors.Is(err, events.ErrBadQuery) {
					t.Errorf("Search(%+v): %v, want ErrBadQuery", q, err)
				}
			}
			if _, _, err := a.Search(t.Context(), events.Query{AccountID: "shop", Cursor: "x"}); !errors.Is(err, events.ErrBadCursor) {
				t.Errorf("bad cursor: %v, want ErrBadCursor", err)
			}
		})
	}
}

// TestActivityMemoryAgreesWithSQL is the oracle of the SQL search: random
// events recorded in Memory and in SQL on each engine, then random queries, paged, must find
// the same messages with the same timelines in the same order.
func TestActivityMemoryAgreesWithSQL(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
	r := rand.New(rand.NewPCG(1, 2))
	addrs := []string{"ann@example.org", "Ann@Example.org", "bob@example.org", "cy@example.net"}
	lists := []string{"", "", "news.example.org", "deals.example.org"}
	accounts := []string{"a", "b"}
	later := []postroom.EventType{postroom.EventHardBounce, postroom.EventSoftBounce, postroom.EventSpam, postroom.EventUnsub}
	var evs []postroom.Event
	for n := range 300 {
		at := t0.Add(time.Duration(n) * time.Minute / 3) // ties at second granularity kept apart by order
		e := postroom.Event{AccountID: accounts[r.IntN(2)], Email: addrs[r.IntN(len(addrs))], List: lists[r.IntN(len(lists))], At: at.Truncate(time.Minute), CallID: fmt.Sprintf("c%d", n%7)}
		if r.IntN(4) == 0 {
			// Queued first, in a call of its own; sometimes never tried.
			e.CallID = fmt.Sprintf("q%d", n)
			q := e
			q.Type, q.At = postroom.EventQueued, e.At.Add(-time.Minute)
			evs = append(evs, q)
			if r.IntN(3) == 0 {
				continue
			}
		}
		switch r.IntN(10) {
		case 0:
			e.Type, e.Reason = postroom.EventReject, "spam"
			evs = append(evs, e)
			continue
		case 1, 2:
			e.Type, e.Reason, e.Diagnostic = postroom.EventDeferral, "timeout", "no answer"
			e.SendID = id(n)
			evs = append(evs, e)
			e.At = e.At.Add(time.Minute)
		}
		e.Type, e.SendID, e.Reason, e.Diagnostic = postroom.EventSend, id(n), "", ""
		evs = append(evs, e)
		if r.IntN(3) == 0 {
			e.Type, e.At, e.Status = later[r.IntN(len(later))], e.At.Add(time.Duration(1+r.IntN(60))*time.Minute), "5.1.1"
			evs = append(evs, e)
		}
	}
	// Recorded in time order, as they would happen.
	slices.SortStableFunc(evs, func(a, b postroom.Event) int { return a.At.Compare(b.At) })
	stores := activityStores(t, t0.Add(7*24*time.Hour))
	for _, s := range stores {
		s.record(t, evs)
	}
	mem := stores["memory"]
	states := []events.State{"", events.StateSent, events.StateDeferred, events.StateRejected, events.StateBounced, events.StateSoftBounced, events.StateSpam, events.StateUnsub, events.StateQueued}
	found := 0
	for range 60 {
		q := events.Query{AccountID: accounts[r.IntN(2)], Limit: 1 + r.IntN(20)}
		if r.IntN(2) == 0 {
			q.Email = addrs[r.IntN(len(addrs))]
		}
		if r.IntN(3) == 0 {
			q.List = lists[2+r.IntN(2)]
		}
		q.State = states[r.IntN(len(states))]
		if r.IntN(5) == 0 {
			q.CallID = fmt.Sprintf("c%d", r.IntN(7))
		}
		if r.IntN(3) == 0 {
			q.From = t0.Add(time.Duration(r.IntN(100)) * time.Minute)
			q.To = q.From.Add(time.Duration(r.IntN(100)) * time.Minute)
		}
		want := normalize(searchAll(t, mem, q))
		found += len(want)
		for _, engine := range dbtest.Engines() {
			if got := normalize(searchAll(t, stores[engine.Name], q)); !reflect.DeepEqual(got, want) {
				t.Fatalf("query %+v:\n%s %v\nmemory %v", q, engine.Name, summary(got), summary(want))
			}
		}
	}
	if found < 100 {
		t.Errorf("the queries found %d messages in all: too few to compare", found)
	}
}

// normalize puts every time of ms in UTC, so that DeepEqual compares
// instants.
func normalize(ms []events.Message) []events.Message {
	for i := range ms {
		ms[i].Created = ms[i].Created.UTC()
		for j := range ms[i].Timeline {
			ms[i].Timeline[j].At = ms[i].Timeline[j].At.UTC()
		}
	}
	return ms
}

func summary(ms []events.Message) []string {
	var out []string
	for _, m := range ms {
		out = append(out, fmt.Sprintf("%s/%s/%s/%d", m.SendID, m.State, m.Created.Format(time.TimeOnly), len(m.Timeline)))
	}
	return out
}

// TestActivityCallAndQueued: a message's record carries its call id,
// sender, subject and templates; a queued recipient is a message of its
// own, queued, until its call tries it, whose queued event then heads
// the timeline of that attempt; a search by call id finds the call's
// messages.
func TestActivityCallAndQueued(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 5, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	call := postroom.Event{AccountID: "shop", CallID: "call-1", From: "orders@shop.example.com", HTMLTemplateID: "welcome-html", TextTemplateID: "welcome-text", List: "news.shop.example.com"}
	ev := func(typ postroom.EventType, sendID, email, subject string, m int) postroom.Event {
		e := call
		e.Type, e.SendID, e.Email, e.Subject, e.At = typ, sendID, email, subject, at(m)
		return e
	}
	evs := []postroom.Event{
		ev(postroom.EventQueued, "", "Ann@example.org", "", 0),
		ev(postroom.EventQueued, "", "bob@example.org", "", 0),
		ev(postroom.EventQueued, "", "cy@example.org", "", 0),
		ev(postroom.EventSend, id(1), "ann@example.org", "Hello Ann", 1),
		ev(postroom.EventReject, "", "cy@example.org", "", 2),
		{Type: postroom.EventSend, SendID: id(2), AccountID: "shop", CallID: "call-2", From: "me@shop.example.com", Email: "ann@example.org", Subject: "Receipt", At: at(3)},
		{Type: postroom.EventHardBounce, SendID: id(1), AccountID: "shop", Email: "ann@example.org", Status: "5.1.1", At: at(4)},
	}
	for name, a := range activityStores(t, at(10)) {
		t.Run(name, func(t *testing.T) {
			a.record(t, evs)
			summary := func(ms []events.Message) []string {
				var out []string
				for _, m := range ms {
					var types []string
					for _, e := range m.Timeline {
						types = append(types, string(e.Type))
					}
					out = append(out, fmt.Sprintf("%s %s %s %s %q %v %v", m.SendID, m.Email, m.State, m.CallID, m.Subject, m.Templates, types))
				}
				return out
			}
			tpl := "[welcome-html welcome-text]"
			for _, c := range []struct {
				name string
				q    events.Query
				want []string
			}{
				{"call", events.Query{CallID: "call-1"}, []string{
					" cy@example.org rejected call-1 \"\" " + tpl + " [queued reject]",
					id(1) + " ann@example.org bounced call-1 \"Hello Ann\" " + tpl + " [queued send hard_bounce]",
					" bob@example.org queued call-1 \"\" " + tpl + " [queued]",
				}},
				{"queued", events.Query{State: events.StateQueued}, []string{" bob@example.org queued call-1 \"\" " + tpl + " [queued]"}},
				{"address", events.Query{Email: "ANN@example.org"}, []string{
					id(2) + " ann@example.org sent call-2 \"Receipt\" [] [send]",
					id(1) + " ann@example.org bounced call-1 \"Hello Ann\" " + tpl + " [queued send hard_bounce]",
				}},
			} {
				t.Run(c.name, func(t *testing.T) {
					c.q.AccountID = "shop"
					for _, limit := range []int{0, 1} {
						c.q.Limit = limit
						if got := summary(searchAll(t, a, c.q)); !reflect.DeepEqual(got, c.want) {
							t.Errorf("limit %d:\n%q\nwant\n%q", limit, got, c.want)
						}
					}
				})
			}
			m, ok, err := a.Info(t.Context(), "shop", id(1))
			if err != nil || !ok || m.From != "orders@shop.example.com" || m.CallID != "call-1" || !m.Created.Equal(at(1)) || len(m.Timeline) != 3 {
				t.Errorf("Info = %+v, %v, %v", m, ok, err)
			}
		})
	}
}
