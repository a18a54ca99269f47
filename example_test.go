package postroom_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/transport"
)

func Example() {
	body := `{
	  "key": "secret", "account_id": "acct-1",
	  "message": {
	    "from_name": "Example Shop", "from_email": "orders@shop.example.com",
	    "subject": "Order {{order_id}} for {{name}}",
	    "text": "Hi {{name}}, your order {{order_id}} ships today.",
	    "bcc": "archive@shop.example.com"
	  },
	  "recipients": [
	    {"email": "ann@example.org", "name": "Ann", "params": {"name": "Ann", "order_id": "1001"}},
	    {"email": "not-an-address", "params": {"name": "Bob"}},
	    {"email": "ANN@example.org", "params": {"name": "Ann again"}}
	  ]
	}`
	var call postroom.Call
	if err := json.Unmarshal([]byte(body), &call); err != nil {
		panic(err)
	}
	mem := transport.NewMemory()
	m, err := postroom.New(mem, postroom.Options{Auth: postroom.StaticKeys{"acct-1": {"secret"}}})
	if err != nil {
		panic(err)
	}
	results, err := m.Send(context.Background(), &call)
	if err != nil {
		panic(err)
	}
	for _, r := range results {
		fmt.Println(strings.TrimSpace(fmt.Sprintf("%-16s %-8s %s", r.Email, r.Status, r.Reason)))
	}
	env := mem.Envelopes()[0]
	fmt.Println("envelope to:", strings.Join(env.To, ", "))
	// Output:
	// ann@example.org  sent
	// not-an-address   invalid  invalid-email: no @
	// ANN@example.org  invalid  duplicate: same address as recipients[0]
	// envelope to: ann@example.org, archive@shop.example.com
}

func ExampleValidationError() {
	m, _ := postroom.New(transport.NewMemory(), postroom.Options{Auth: postroom.NoAuth{}})
	call := &postroom.Call{
		Message: postroom.Message{
			FromEmail: "orders@shop.example.com",
			Subject:   "Hi {{name}",
			Text:      "Hello",
			Headers:   []postroom.Header{{Name: "Bcc", Value: "spy@example.com"}},
		},
		Recipients: []postroom.Recipient{{Email: "ann@example.org"}},
	}
	_, err := m.Send(context.Background(), call)
	var ve *postroom.ValidationError
	if errors.As(err, &ve) {
		fmt.Println("first problem in", ve.Field)
	}
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		if errors.As(e, &ve) {
			fmt.Println("-", ve.Field)
		}
	}
	// Output:
	// first problem in message.subject
	// - message.subject
	// - message.headers[0].name
}
