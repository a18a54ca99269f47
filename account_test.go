package postroom_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/transport"
)

// accountCall is a one-recipient message.send call of account.
func accountCall(account string) *postroom.Call {
	return &postroom.Call{
		Key:       "k",
		AccountID: account,
		Message:   postroom.Message{FromEmail: "shop@example.com", Subject: "Order", Text: "Shipped."},
		Recipients: []postroom.Recipient{
			{Email: "ann@example.com"},
		},
	}
}

// TestAccountIDRefused: under NoAuth, which takes any account, a call
// whose account_id PostgreSQL's text cannot hold (a NUL, invalid UTF-8)
// or no account has (a control character, over 255 bytes) is refused
// with a *ValidationError on account_id by Send, Prepare and Validate
// (which the outbox's Enqueue calls), before anything is sent; the
// account ids an application has are taken.
func TestAccountIDRefused(t *testing.T) {
	mem := transport.NewMemory()
	m, err := postroom.New(mem, postroom.Options{Auth: postroom.NoAuth{}})
	if err != nil {
		t.Fatal(err)
	}
	for _, account := range []string{"a\x00b", "a\nb", "a\tb", "\x7f", "a\u0085b", "a\xffb", strings.Repeat("a", 256)} {
		for _, step := range []struct {
			name string
			run  func(*postroom.Call) error
		}{
			{"Send", func(c *postroom.Call) error { _, err := m.Send(t.Context(), c); return err }},
			{"Prepare", func(c *postroom.Call) error { _, err := m.Prepare(t.Context(), postroom.OpSend, c); return err }},
			{"Validate", func(c *postroom.Call) error { _, err := m.Validate(t.Context(), postroom.OpSend, c); return err }},
		} {
			var ve *postroom.ValidationError
			if err := step.run(accountCall(account)); !errors.As(err, &ve) || ve.Field != "account_id" {
				t.Errorf("%s of account_id %q: %v; want a *ValidationError on account_id", step.name, account, err)
			}
		}
	}
	if mem.Len() != 0 {
		t.Fatalf("%d messages sent; want none", mem.Len())
	}
	for _, account := range []string{"", "shop", "compté", strings.Repeat("a", 255)} {
		if rs, err := m.Send(t.Context(), accountCall(account)); err != nil || rs[0].Status != postroom.StatusSent {
			t.Errorf("account_id %q: %v %+v; want sent", account, err, rs)
		}
	}
}

// TestAccountIDWithOtherProblems: a bad account_id is reported with the
// other problems of the message's structure, each naming its field.
func TestAccountIDWithOtherProblems(t *testing.T) {
	m, err := postroom.New(transport.NewMemory(), postroom.Options{Auth: postroom.NoAuth{}})
	if err != nil {
		t.Fatal(err)
	}
	call := accountCall("a\x00b")
	call.Message.FromEmail = "nobody"
	_, err = m.Send(t.Context(), call)
	fields := map[string]bool{}
	for _, ve := range postroom.ValidationErrors(err) {
		fields[ve.Field] = true
	}
	if !fields["account_id"] || !fields["message.from_email"] {
		t.Errorf("%v: want problems on account_id and message.from_email", err)
	}
}

// BenchmarkValidateOneRecipient is Mailer.Validate of a one-recipient
// call: the check half, where the account_id is checked, without the
// sending that dwarfs it in a Send.
func BenchmarkValidateOneRecipient(b *testing.B) {
	m, err := postroom.New(transport.NewMemory(), postroom.Options{Auth: postroom.NoAuth{}})
	if err != nil {
		b.Fatal(err)
	}
	call := accountCall("shop-eu-1234")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.Validate(b.Context(), postroom.OpSend, call); err != nil {
			b.Fatal(err)
		}
	}
}
