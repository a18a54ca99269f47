package postroomtest_test

import (
	"context"
	"fmt"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/postroomtest"
)

// sendReceipt is the application's code under test.
func sendReceipt(ctx context.Context, m *postroom.Mailer, email, orderID string) error {
	_, err := m.Send(ctx, &postroom.Call{
		Message: postroom.Message{
			FromEmail: "shop@example.com",
			Subject:   "Your order {{order_id}}",
			HTML:      "<p>Order {{order_id}} is on its way.</p>",
		},
		Recipients: []postroom.Recipient{{Email: email, Params: postroom.Params{"order_id": orderID}}},
	})
	return err
}

func Example() {
	// In a test: the application's Mailer over a Recorder.
	rec := postroomtest.NewRecorder()
	m, err := postroom.New(rec, postroom.Options{Auth: postroom.NoAuth{}})
	if err != nil {
		panic(err)
	}
	if err := sendReceipt(context.Background(), m, "ann@example.com", "1001"); err != nil {
		panic(err)
	}
	for _, msg := range rec.Envelopes() {
		decoded, err := postroomtest.Decode(msg)
		if err != nil {
			panic(err)
		}
		fmt.Println(decoded.EnvelopeTo[0], "|", decoded.Subject, "|", decoded.HTML)
		fmt.Println(decoded.Text) // generated from the html
	}
	// In a test function, with t:
	//	rec.Only(t).Check(t, postroomtest.Want{Subject: "Your order 1001", HTMLContains: []string{"on its way"}})
	// Output:
	// ann@example.com | Your order 1001 | <p>Order 1001 is on its way.</p>
	// Order 1001 is on its way.
}
