package events_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/events"
)

// id is the send id of n, 32 hex digits.
func id(n int) string { return fmt.Sprintf("%032x", n) }

func TestMemory(t *testing.T) {
	now := time.Date(2026, 11, 28, 5, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	m, err := events.NewMemory(events.MemoryOptions{MaxSends: 3, Retention: time.Hour, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := 1; i <= 4; i++ {
		m.OnEvent(ctx, postroom.Event{Type: postroom.EventSend, SendID: id(i), AccountID: "a", Email: fmt.Sprintf("u%d@example.net", i), At: now})
	}
	// Not sends, or no send id: ignored.
	m.OnEvent(ctx, postroom.Event{Type: postroom.EventHardBounce, SendID: id(9), AccountID: "a", Email: "x@example.net"})
	m.OnEvent(ctx, postroom.Event{Type: postroom.EventSend, SendID: "short", AccountID: "a", Email: "x@example.net"})

	for _, tc := range []struct {
		id    string
		found bool
		email string
	}{
		{id(1), false, ""}, // forgotten: MaxSends 3
		{id(2), true, "u2@example.net"},
		{id(4), true, "u4@example.net"},
		{fmt.Sprintf("%032X", 0xabc), false, ""},
		{id(9), false, ""},
	} {
		s, ok, err := m.Lookup(ctx, tc.id)
		if err != nil || ok != tc.found || s.Email != tc.email {
			t.Errorf("Send(%s) = %+v, %v, %v; want found %v email %q", tc.id, s, ok, err, tc.found, tc.email)
		}
	}
	// A list message's send keeps its list; a transactional one has none.
	m.OnEvent(ctx, postroom.Event{Type: postroom.EventSend, SendID: id(5), AccountID: "a", Email: "u5@example.net", List: "news.shop.example.com", At: now})
	if s, ok, _ := m.Lookup(ctx, id(5)); !ok || s.List != "news.shop.example.com" {
		t.Errorf("Send of a list message = %+v, %v; want list news.shop.example.com", s, ok)
	}
	if s, ok, _ := m.Lookup(ctx, id(4)); !ok || s.List != "" {
		t.Errorf("Send of a transactional message = %+v, %v; want no list", s, ok)
	}
	// Upper-case ids are the same ids.
	if _, ok, _ := m.Lookup(ctx, fmt.Sprintf("%032X", 4)); !ok {
		t.Error("an upper-case send id was not found")
	}
	now = now.Add(2 * time.Hour)
	if _, ok, _ := m.Lookup(ctx, id(4)); ok {
		t.Error("a send older than Retention was found")
	}
}

func TestNewMemoryValidates(t *testing.T) {
	if _, err := events.NewMemory(events.MemoryOptions{MaxSends: -1}); err == nil {
		t.Error("MaxSends -1 accepted")
	}
	if _, err := events.NewMemory(events.MemoryOptions{Retention: -1}); err == nil {
		t.Error("Retention -1 accepted")
	}
}
