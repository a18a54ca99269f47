package outbox_test

import (
	"context"
	"fmt"
	"log"

	"github.com/postroom/postroom/outbox"
)

// What a call's recipients still wait for, and a retry of the deferred
// ones now (after the relay's greylisting period, say).
func ExampleOutbox_Waiting() {
	var ob *outbox.Outbox // built with outbox.New
	ctx, id := context.Background(), "the call's id"
	waiting, err := ob.Waiting(ctx, id)
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range waiting {
		fmt.Println(r.Email, r.State, r.LastReason, r.Attempts, r.NextAttempt)
		// ann@example.org deferred soft-bounce: 451 4.7.1 greylisted 1 2026-11-28 06:10:00 +0000 UTC
	}
	n, err := ob.Retry(ctx, id)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(n, "recipients retried now")
}

// Cancelling a call, then once no recipient is being sent any more,
// cancelling those that the runs in flight deferred meanwhile.
func ExampleOutbox_Cancel() {
	var ob *outbox.Outbox // built with outbox.New
	ctx, id := context.Background(), "the call's id"
	n, err := ob.Cancel(ctx, id, "wrong price in the template")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(n, "recipients cancelled")
	// Later, when Waiting shows no recipient in the state WaitingSending:
	if _, err := ob.Cancel(ctx, id, "wrong price in the template"); err != nil {
		log.Fatal(err)
	}
}

// An account's calls, newest first, page by page.
func ExampleOutbox_Calls() {
	var ob *outbox.Outbox // built with outbox.New
	ctx := context.Background()
	q := outbox.CallsQuery{AccountID: "shop", Limit: 100}
	for {
		calls, next, err := ob.Calls(ctx, q)
		if err != nil {
			log.Fatal(err)
		}
		for _, c := range calls {
			fmt.Println(c.ID, c.StartedAt, c.State, c.Counts)
		}
		if next == "" {
			break
		}
		q.Before = next
	}
}
