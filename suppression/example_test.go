package suppression_test

import (
	"context"
	"fmt"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/suppression"
	"github.com/postroom/postroom/transport"
)

// A bounce observed lists the address; the next call to it is rejected
// without a message, and the others are sent.
func Example() {
	ctx := context.Background()
	now := func() time.Time { return time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC) }
	list, err := suppression.NewMemory(suppression.Options{Now: now})
	if err != nil {
		panic(err)
	}
	// What came back: a hard bounce of ann's (from package bounce, or an
	// Options.OnEvent event through ObservationOf).
	if _, err := list.Observe(ctx, suppression.Observation{
		AccountID: "shop", Address: "Ann@Example.com", Kind: suppression.HardBounce,
		Status: "5.1.1", Diagnostic: "550 5.1.1 user unknown",
	}); err != nil {
		panic(err)
	}

	m, err := postroom.New(transport.NewMemory(), postroom.Options{Auth: postroom.NoAuth{}, Suppressions: list, Now: now})
	if err != nil {
		panic(err)
	}
	results, err := m.Send(ctx, &postroom.Call{
		AccountID: "shop",
		Message:   postroom.Message{FromEmail: "orders@shop.example.com", Subject: "Your order", Text: "Thanks!"},
		Recipients: []postroom.Recipient{
			{Email: "ann@example.com"},
			{Email: "bob@example.com"},
		},
	})
	if err != nil {
		panic(err)
	}
	for _, r := range results {
		fmt.Println(r.Email, r.Status, r.Reason)
	}
	// Output:
	// ann@example.com rejected hard-bounce: suppressed since 2026-11-20: 550 5.1.1 user unknown
	// bob@example.com sent
}
