package events_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/events"
)

// What happened to the messages to an address: each message with its
// state and timeline, newest first.
func ExampleMemory_Search() {
	t0 := time.Date(2026, 11, 28, 5, 0, 0, 0, time.UTC)
	m, err := events.NewMemory(events.MemoryOptions{Now: func() time.Time { return t0.Add(time.Hour) }})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	// As a Mailer's Options.OnEvent and package inbound would give them.
	for _, e := range []postroom.Event{
		{Type: postroom.EventDeferral, SendID: "6f1a0c2e9b8d4f3a7c5e1d2b4a6f8c0e", AccountID: "shop", Email: "ann@example.org", Reason: "soft-bounce", Status: "4.2.2", Diagnostic: "452 4.2.2 mailbox full", At: t0},
		{Type: postroom.EventSend, SendID: "6f1a0c2e9b8d4f3a7c5e1d2b4a6f8c0e", AccountID: "shop", Email: "ann@example.org", At: t0.Add(10 * time.Minute)},
		{Type: postroom.EventSend, SendID: "0b7e5d3c1a9f8e7d6c5b4a3f2e1d0c9b", AccountID: "shop", Email: "ann@example.org", List: "news.shop.example.com", At: t0.Add(20 * time.Minute)},
		{Type: postroom.EventSpam, SendID: "0b7e5d3c1a9f8e7d6c5b4a3f2e1d0c9b", AccountID: "shop", Email: "ann@example.org", List: "news.shop.example.com", At: t0.Add(30 * time.Minute)},
	} {
		m.OnEvent(ctx, e)
	}
	msgs, next, err := m.Search(ctx, events.Query{AccountID: "shop", Email: "Ann@Example.org"})
	if err != nil {
		panic(err)
	}
	for _, g := range msgs {
		fmt.Println(strings.TrimSpace(fmt.Sprintln(g.SendID, g.State, g.Created.Format(time.TimeOnly), g.List)))
		for _, e := range g.Timeline {
			fmt.Println("  ", strings.TrimSpace(fmt.Sprintln(e.At.Format(time.TimeOnly), e.Type, e.Diagnostic)))
		}
	}
	fmt.Printf("next page: %q\n", next)
	// Output:
	// 0b7e5d3c1a9f8e7d6c5b4a3f2e1d0c9b spam 05:20:00 news.shop.example.com
	//    05:20:00 send
	//    05:30:00 spam
	// 6f1a0c2e9b8d4f3a7c5e1d2b4a6f8c0e sent 05:00:00
	//    05:00:00 deferral 452 4.2.2 mailbox full
	//    05:10:00 send
	// next page: ""
}
