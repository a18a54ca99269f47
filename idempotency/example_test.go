package idempotency_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/idempotency"
	"github.com/postroom/postroom/transport"
)

// A retry with the same key returns the first call's results and sends
// nothing; the same key with another payload is a conflict.
func ExampleRun() {
	tr := transport.NewMemory()
	m, err := postroom.New(tr, postroom.Options{Auth: postroom.NoAuth{}})
	if err != nil {
		panic(err)
	}
	store, err := idempotency.NewMemory(idempotency.Options{})
	if err != nil {
		panic(err)
	}
	call := &postroom.Call{
		AccountID: "acct",
		Message:   postroom.Message{FromEmail: "shop@example.com", Subject: "Shipped", Text: "Your order has shipped."},
		Recipients: []postroom.Recipient{
			{Email: "ann@example.com"},
			{Email: "bob@example.com"},
		},
	}
	ctx := context.Background()
	first, _ := idempotency.Run(ctx, store, m, "order-1001", postroom.OpSend, call)
	retry, _ := idempotency.Run(ctx, store, m, "order-1001", postroom.OpSend, call)
	fmt.Println(first[0].Status, retry[0].Status, first[0].SendID == retry[0].SendID, tr.Len())

	call.Message.Subject = "Shipped today"
	_, err = idempotency.Run(ctx, store, m, "order-1001", postroom.OpSend, call)
	fmt.Println(errors.Is(err, idempotency.ErrConflict))
	// Output:
	// sent sent true 2
	// true
}
