package postroom_test

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/transport"
)

// Tests of helpers.go (helpers_test.go holds the package's test helpers).

var errUnknownCurrency = errors.New("unknown currency")

// money formats an amount in a currency: {{money total currency}}.
func moneyHelper() postroom.Helper {
	return postroom.HelperFunc2(func(amount float64, currency string) (string, error) {
		symbol, ok := map[string]string{"EUR": "€", "USD": "$"}[currency]
		if !ok {
			return "", fmt.Errorf("%w: %q", errUnknownCurrency, currency)
		}
		return symbol + fmt.Sprintf("%.2f", amount), nil
	})
}

func helperOptions() postroom.Options {
	return postroom.Options{Helpers: map[string]postroom.Helper{
		"money": moneyHelper(),
		"year":  postroom.HelperFunc0(func() (int, error) { return 2026, nil }),
		"badge": postroom.HelperFunc1(func(s string) (postroom.SafeHTML, error) {
			return postroom.SafeHTML("<b>" + s + "</b>"), nil
		}),
		"shout": postroom.HelperFunc1(func(s string) (string, error) { return strings.ToUpper(s) + "!", nil }),
		"times": postroom.HelperFunc2(func(n int, s string) (string, error) { return strings.Repeat(s, n), nil }),
		"boom":  postroom.HelperFunc0(func() (string, error) { panic("boom") }),
		"clamp": postroom.HelperFunc3(func(lo, x, hi float64) (float64, error) { return min(max(x, lo), hi), nil }),
		// kind names what the data holds in its argument (HelperCall.Arg),
		// and checks that Arg is nil out of range.
		"kind": postroom.HelperFuncN(1, 1, func(c *postroom.HelperCall) (any, error) {
			k := fmt.Sprintf("%T", c.Arg(0))
			switch c.Arg(0).(type) {
			case postroom.SafeHTML:
				k = "safe"
			case []any:
				k = "list"
			case nil:
				k = "nil"
			}
			return fmt.Sprintf("%s:%v", k, c.Arg(1) == nil && c.Arg(-1) == nil), nil
		}),
		"list": postroom.HelperFuncN(0, -1, func(c *postroom.HelperCall) (any, error) {
			sep, _ := c.Hash("sep")
			var parts []string
			for i := range c.Len() {
				s, err := c.String(i)
				if err != nil {
					return nil, err
				}
				parts = append(parts, s)
			}
			if c.Block() {
				inner, err := c.Fn(nil)
				return inner + strings.Join(parts, fmt.Sprint(sep)), err
			}
			return strings.Join(parts, fmt.Sprint(sep)), nil
		}),
	}}
}

func TestHelpers(t *testing.T) {
	for _, tc := range []struct {
		name, html string
		params     map[string]any
		want       string
	}{
		{"typed arguments", "{{money total currency}}", map[string]any{"total": 1234.5, "currency": "EUR"}, "€1234.50"},
		{"numeric string converted", "{{money total \"USD\"}}", map[string]any{"total": "9.5"}, "$9.50"},
		{"int parameter", "{{times n \"ab\"}}", map[string]any{"n": 3}, "ababab"},
		{"no arguments shadows a param", "{{year}}/{{this.year}}", map[string]any{"year": 1999}, "2026/1999"},
		{"string result escaped", "{{shout s}}", map[string]any{"s": "<i>"}, "&lt;I&gt;!"},
		{"SafeHTML not escaped", "{{badge s}}", map[string]any{"s": "new"}, "<b>new</b>"},
		{"SafeHTML as another helper's argument", "{{shout (badge s)}}", map[string]any{"s": "x"}, "&lt;B&gt;X&lt;/B&gt;!"},
		{"hash and variadic", `{{list a b "c" sep="-"}}`, map[string]any{"a": 1, "b": true}, "1-true-c"},
		{"block", `{{#list "x" sep=""}}<{{s}}>{{/list}}`, map[string]any{"s": "&"}, "<&amp;>x"},
		{"three arguments", "{{clamp lo x hi}} {{clamp lo 0 hi}}", map[string]any{"lo": 1, "x": 7, "hi": "5"}, "5 1"},
		{"raw argument", "{{kind (badge s)}} {{kind xs}} {{kind missing}} {{kind true}}", map[string]any{"s": "x", "xs": []any{1}}, "safe:true list:true nil:true bool:true"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			call := smallCall("a@example.com")
			call.Message.HTML, call.Message.Text = tc.html, ""
			call.Recipients[0].Params = tc.params
			results, msgs := sendParts(t, helperOptions(), postroom.OpSend, call)
			if results[0].Status != postroom.StatusSent {
				t.Fatalf("result %+v", results[0])
			}
			if got := body(t, msgs[0], "text/html"); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestHelperRenderErrors: a helper's error, a panic or an argument that
// does not convert makes that recipient invalid (render-error) and leaves
// the others alone.
func TestHelperRenderErrors(t *testing.T) {
	call := smallCall()
	call.Message.HTML, call.Message.Text = "{{#if bad}}{{boom}}{{/if}}{{money total currency}}", ""
	for _, p := range []map[string]any{
		{"total": 1, "currency": "EUR"},
		{"total": 1, "currency": "XXX"},
		{"total": "lots", "currency": "EUR"},
		{"total": 1, "currency": "EUR", "bad": true},
		{"total": 2, "currency": "USD"},
	} {
		call.Recipients = append(call.Recipients, postroom.Recipient{Email: fmt.Sprintf("r%d@example.com", len(call.Recipients)), Params: p})
	}
	results, _ := sendParts(t, helperOptions(), postroom.OpSend, call)
	for i, want := range []struct {
		code postroom.ReasonCode
		is   error
	}{{"", nil}, {postroom.ReasonRenderError, errUnknownCurrency}, {postroom.ReasonRenderError, postroom.ErrHelperArgument}, {postroom.ReasonRenderError, nil}, {"", nil}} {
		r := results[i]
		if want.code == "" {
			if r.Status != postroom.StatusSent {
				t.Errorf("recipient %d: %+v, want sent", i, r)
			}
			continue
		}
		if r.Status != postroom.StatusInvalid || r.Code != want.code {
			t.Errorf("recipient %d: %+v, want invalid %s", i, r, want.code)
		}
		if want.is != nil && !errors.Is(r.Err, want.is) {
			t.Errorf("recipient %d: Err %v, want %v", i, r.Err, want.is)
		}
	}
}

func TestHelperArity(t *testing.T) {
	for _, tc := range []struct{ name, field, subject, html string }{
		{"too few", "message.html", "s", "{{money total}}"},
		{"too many", "message.subject", "{{year 1}}", "x"},
		{"hash to a typed helper", "message.html", "s", "{{money 1 \"EUR\" round=true}}"},
		{"typed helper as a block", "message.html", "s", "{{#shout x}}y{{/shout}}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			call := smallCall("a@example.com")
			call.Message.Subject, call.Message.HTML = tc.subject, tc.html
			_, err := newMailer(t, transport.NewMemory(), helperOptions()).Send(t.Context(), call)
			var ve *postroom.ValidationError
			if !errors.As(err, &ve) || ve.Field != tc.field || !errors.Is(err, postroom.ErrTemplateSyntax) {
				t.Fatalf("err = %v, want a ValidationError on %s", err, tc.field)
			}
		})
	}
}

func TestHelperOptions(t *testing.T) {
	ok := postroom.HelperFunc0(func() (string, error) { return "", nil })
	for _, tc := range []struct {
		name    string
		helpers map[string]postroom.Helper
	}{
		{"built-in name", map[string]postroom.Helper{"if": ok}},
		{"postroom's own helper", map[string]postroom.Helper{"upper": ok}},
		{"not a name", map[string]postroom.Helper{"a.b": ok}},
		{"number", map[string]postroom.Helper{"12": ok}},
		{"this", map[string]postroom.Helper{"this": ok}},
		{"zero Helper", map[string]postroom.Helper{"x": {}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := postroom.New(transport.NewMemory(), postroom.Options{Auth: postroom.NoAuth{}, Helpers: tc.helpers}); err == nil {
				t.Errorf("New accepted %v", tc.helpers)
			}
		})
	}
	t.Run("copied", func(t *testing.T) {
		helpers := map[string]postroom.Helper{"greet": postroom.HelperFunc0(func() (string, error) { return "hi", nil })}
		m := newMailer(t, transport.NewMemory(), postroom.Options{Helpers: helpers})
		helpers["greet"] = postroom.HelperFunc0(func() (string, error) { return "changed", nil })
		call := smallCall("a@example.com")
		call.Message.HTML, call.Message.Text = "{{greet}}", ""
		results, err := m.Send(t.Context(), call)
		if err != nil || results[0].Status != postroom.StatusSent {
			t.Fatalf("Send: %+v, %v", results, err)
		}
	})
}

// TestHelpersConcurrent calls one helper from every worker (run with
// -race).
func TestHelpersConcurrent(t *testing.T) {
	var calls atomic.Int64
	opts := postroom.Options{Concurrency: 8, Helpers: map[string]postroom.Helper{
		"twice": postroom.HelperFunc1(func(n float64) (float64, error) { calls.Add(1); return 2 * n, nil }),
	}}
	call := smallCall()
	call.Message.HTML, call.Message.Text = "{{twice n}}", "{{twice n}}"
	for i := range 64 {
		call.Recipients = append(call.Recipients, postroom.Recipient{Email: fmt.Sprintf("r%d@example.com", i), Params: map[string]any{"n": i}})
	}
	results, msgs := sendParts(t, opts, postroom.OpSend, call)
	for i, r := range results {
		if r.Status != postroom.StatusSent {
			t.Fatalf("recipient %d: %+v", i, r)
		}
		if got, want := body(t, msgs[i], "text/plain"), fmt.Sprint(2*i); got != want {
			t.Errorf("recipient %d: %q, want %q", i, got, want)
		}
	}
	if n := calls.Load(); n != 128 {
		t.Errorf("%d calls, want 128", n)
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
