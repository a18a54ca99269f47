package postroom_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/templatestore"
	"github.com/postroom/postroom/transport"
)

// Tests of misuse that once panicked or passed silently (misuse.go).

// TestZeroMailer: a Mailer not made by New, zero or nil, returns
// ErrZeroMailer from every method instead of panicking.
func TestZeroMailer(t *testing.T) {
	var zero postroom.Mailer
	var nilMailer *postroom.Mailer
	for name, m := range map[string]*postroom.Mailer{"zero": &zero, "nil": nilMailer} {
		t.Run(name, func(t *testing.T) {
			call := smallCall("a@example.com")
			for op, run := range map[string]func() error{
				"Send":         func() error { _, err := m.Send(t.Context(), call); return err },
				"SendTemplate": func() error { _, err := m.SendTemplate(t.Context(), call); return err },
				"Run":          func() error { _, err := m.Run(t.Context(), postroom.OpSend, call, postroom.RunOptions{}); return err },
				"Preview": func() error {
					_, err := m.Preview(t.Context(), postroom.OpSend, call, postroom.PreviewOptions{})
					return err
				},
			} {
				if err := run(); !errors.Is(err, postroom.ErrZeroMailer) {
					t.Errorf("%s: %v; want ErrZeroMailer", op, err)
				}
			}
		})
	}
}

// TestHelperObjectArgument: an object given to a helper's string
// parameter is refused (invalid, render-error, ErrHelperArgument), not
// printed as [object Object] and sent.
func TestHelperObjectArgument(t *testing.T) {
	opts := postroom.Options{Helpers: map[string]postroom.Helper{
		"shout": postroom.HelperFunc1(func(s string) (string, error) { return strings.ToUpper(s) + "!", nil }),
	}}
	call := smallCall()
	call.Message.HTML, call.Message.Text = "", "{{shout v}}"
	for _, v := range []any{
		map[string]any{"a": 1},
		[]any{"x", map[string]any{}},
		struct{ A int }{1},
		&struct{ A int }{1},
		map[string]int{"a": 1},
	} {
		call.Recipients = append(call.Recipients, postroom.Recipient{Email: "r" + string(rune('a'+len(call.Recipients))) + "@example.com", Params: map[string]any{"v": v}})
	}
	// What still prints: strings, numbers, booleans, arrays of them.
	for _, v := range []any{"x", 1.5, true, []any{"a", 2}} {
		call.Recipients = append(call.Recipients, postroom.Recipient{Email: "r" + string(rune('a'+len(call.Recipients))) + "@example.com", Params: map[string]any{"v": v}})
	}
	results, _ := sendParts(t, opts, postroom.OpSend, call)
	for i, r := range results {
		if i < 5 {
			if r.Status != postroom.StatusInvalid || r.Code != postroom.ReasonRenderError || !errors.Is(r.Err, postroom.ErrHelperArgument) {
				t.Errorf("recipient %d (%T): %+v; want invalid, render-error, ErrHelperArgument", i, call.Recipients[i].Params["v"], r)
			}
			continue
		}
		if r.Status != postroom.StatusSent {
			t.Errorf("recipient %d (%v): %+v; want sent", i, call.Recipients[i].Params["v"], r)
		}
	}
}

// TestHelperArgumentReason: a recipient whose helper argument does not
// convert says why in its Reason, in the template's terms; a helper's own
// error and a panic do not show their text.
func TestHelperArgumentReason(t *testing.T) {
	call := smallCall()
	call.Message.HTML, call.Message.Text = "", "{{#if bad}}{{boom}}{{/if}}{{money total currency}}"
	for _, p := range []map[string]any{
		{"total": "lots", "currency": "EUR"},
		{"total": map[string]any{"x": 1}, "currency": "EUR"},
		{"total": 1, "currency": "XXX"},
		{"total": 1, "currency": "EUR", "bad": true},
	} {
		call.Recipients = append(call.Recipients, postroom.Recipient{Email: "r" + string(rune('a'+len(call.Recipients))) + "@example.com", Params: p})
	}
	results, _ := sendParts(t, helperOptions(), postroom.OpSend, call)
	for i, want := range []string{
		"render-error: text: argument 1 of money is a string, not a number",
		"render-error: text: argument 1 of money is an object, not a number",
		"render-error: text",
		"render-error: text",
	} {
		if r := results[i]; r.Status != postroom.StatusInvalid || r.Reason != want {
			t.Errorf("recipient %d: %s %q; want invalid %q", i, r.Status, r.Reason, want)
		}
	}
}

// TestPartialEmptyAccount: a partial looked up for a call whose account_id
// is empty is refused with a reason that says the account is empty.
func TestPartialEmptyAccount(t *testing.T) {
	store := templatestore.NewMemory()
	if err := store.Put("acct", "footer", "-- the shop"); err != nil {
		t.Fatal(err)
	}
	m := newMailer(t, transport.NewMemory(), postroom.Options{Templates: store})
	for _, tc := range []struct {
		name  string
		op    postroom.Operation
		field string
		edit  func(*postroom.Call)
	}{
		{"partial", postroom.OpSend, "message.text", func(c *postroom.Call) { c.Message.Text = "Hi {{> footer}}" }},
		{"stored template", postroom.OpSendTemplate, "message.text_template_id", func(c *postroom.Call) {
			c.Message.HTML, c.Message.Text, c.Message.TextTemplateID = "", "", "footer"
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			call := smallCall("a@example.com")
			tc.edit(call)
			if _, err := m.Run(t.Context(), tc.op, call, postroom.RunOptions{}); err != nil {
				t.Fatalf("with the account: %v", err)
			}
			call.AccountID = ""
			_, err := m.Run(t.Context(), tc.op, call, postroom.RunOptions{})
			var ve *postroom.ValidationError
			if !errors.As(err, &ve) || ve.Field != tc.field || !errors.Is(err, postroom.ErrTemplateNotFound) || !strings.Contains(ve.Reason, "account_id is empty") {
				t.Errorf("err = %v; want a ValidationError on %s saying the account_id is empty", err, tc.field)
			}
		})
	}
}
