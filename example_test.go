package postroom_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime/quotedprintable"
	"net/mail"
	"strconv"
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

// A currency formatter registered as a helper: {{money total currency}}
// with total 1234.5 and currency "EUR" renders €1,234.50. An unknown
// currency is that recipient's render-error, not the call's.
func ExampleHelperFunc2() {
	money := postroom.HelperFunc2(func(amount float64, currency string) (string, error) {
		symbol, ok := map[string]string{"EUR": "€", "USD": "$", "GBP": "£"}[currency]
		if !ok {
			return "", fmt.Errorf("unknown currency %q", currency)
		}
		cents := int64(math.Round(amount * 100))
		whole := strconv.FormatInt(cents/100, 10)
		for i := len(whole) - 3; i > 0; i -= 3 {
			whole = whole[:i] + "," + whole[i:]
		}
		return fmt.Sprintf("%s%s.%02d", symbol, whole, cents%100), nil
	})
	mem := transport.NewMemory()
	m, err := postroom.New(mem, postroom.Options{
		Auth:    postroom.NoAuth{},
		Helpers: map[string]postroom.Helper{"money": money},
	})
	if err != nil {
		panic(err)
	}
	call := &postroom.Call{
		Message: postroom.Message{
			FromEmail: "orders@shop.example.com",
			Subject:   "Your order",
			Text:      "Total: {{money total currency}}",
		},
		Recipients: []postroom.Recipient{
			{Email: "ann@example.org", Params: map[string]any{"total": 1234.5, "currency": "EUR"}},
			{Email: "bob@example.org", Params: map[string]any{"total": 20, "currency": "XYZ"}},
		},
	}
	results, err := m.Send(context.Background(), call)
	if err != nil {
		panic(err)
	}
	for _, r := range results {
		fmt.Println(strings.TrimSpace(fmt.Sprint(r.Email, " ", r.Status, " ", r.Code)))
	}
	msg, err := mail.ReadMessage(bytes.NewReader(mem.Envelopes()[0].Data))
	if err != nil {
		panic(err)
	}
	text, _ := io.ReadAll(quotedprintable.NewReader(msg.Body))
	fmt.Println(string(text))
	// Output:
	// ann@example.org sent
	// bob@example.org invalid render-error
	// Total: €1,234.50
}
