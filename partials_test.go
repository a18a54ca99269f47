package postroom_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/postroomtest"
	"github.com/postroom/postroom/templatestore"
	"github.com/postroom/postroom/transport"
)

// partialStore returns a memory store holding sources for account "acct".
func partialStore(t *testing.T, sources map[string]string) *templatestore.Memory {
	t.Helper()
	store := templatestore.NewMemory()
	for id, src := range sources {
		if err := store.Put("acct", id, src); err != nil {
			t.Fatal(err)
		}
	}
	return store
}

// sendParts sends call through a Mailer with opts and returns each
// recipient's result and, for those sent, their parsed message.
func sendParts(t *testing.T, opts postroom.Options, op postroom.Operation, call *postroom.Call) ([]postroom.Result, []*postroomtest.Message) {
	t.Helper()
	mem := transport.NewMemory()
	results, err := newMailer(t, mem, opts).Run(t.Context(), op, call, postroom.RunOptions{})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	msgs := make([]*postroomtest.Message, len(results))
	for i, r := range results {
		if r.Status != postroom.StatusSent {
			continue
		}
		env, ok := mem.Envelope(r.SendID)
		if !ok {
			t.Fatalf("no message recorded for %s", r.Email)
		}
		msgs[i] = postroomtest.Parse(t, env.Data)
	}
	return results, msgs
}

// body is the only part of media type mediaType in m, with its line
// breaks as LF.
func body(t *testing.T, m *postroomtest.Message, mediaType string) string {
	t.Helper()
	return strings.ReplaceAll(string(m.Leaf(t, mediaType).Body), "\r\n", "\n")
}

func TestPartialsSend(t *testing.T) {
	store := partialStore(t, map[string]string{
		"brand":  "Shop & Co",
		"footer": "<p>© {{year}} {{> brand}}</p>\n",
		"line":   "{{qty}} × {{name}}",
	})
	call := smallCall("a@example.com")
	call.Message.Subject = "Your order from {{> brand}}"
	call.Message.HTML = "<ul>\n{{#each items}}\n  <li>{{> line}}</li>\n{{/each}}\n</ul>\n  {{> footer year=2026}}\n"
	call.Message.Text = "{{#each items}}\n{{> line}}\n{{/each}}\n{{> footer year=2026}}"
	call.Recipients[0].Params = map[string]any{"items": []any{
		map[string]any{"qty": 2, "name": "<tea>"},
	}}
	results, msgs := sendParts(t, postroom.Options{Templates: store}, postroom.OpSend, call)
	if results[0].Status != postroom.StatusSent {
		t.Fatalf("result %+v", results[0])
	}
	m := msgs[0]
	if got, want := m.HeaderValue("Subject"), "Your order from Shop & Co"; got != want {
		t.Errorf("subject %q, want %q", got, want)
	}
	if got, want := body(t, m, "text/html"), "<ul>\n  <li>2 × &lt;tea&gt;</li>\n</ul>\n  <p>© 2026 Shop & Co</p>\n"; got != want {
		t.Errorf("html %q\nwant %q", got, want)
	}
	// A standalone {{> line}} takes its line's newline with it, as in
	// handlebars.js: the partial's output supplies its own.
	if got, want := body(t, m, "text/plain"), "2 × <tea><p>© 2026 Shop & Co</p>\n"; got != want {
		t.Errorf("text %q\nwant %q", got, want)
	}
}

func TestPartialsSendTemplate(t *testing.T) {
	store := partialStore(t, map[string]string{
		"layout":  "<html><body>\n{{> content}}\n<footer>{{> @partial-block}}</footer>\n</body></html>",
		"welcome": "{{#> layout}}\n{{#*inline \"content\"}}<h1>Hi {{name}}</h1>{{/inline}}\nUnsubscribe\n{{/layout}}",
	})
	call := smallCall("a@example.com")
	call.Message.HTML, call.Message.Text, call.Message.HTMLTemplateID = "", "", "welcome"
	results, msgs := sendParts(t, postroom.Options{Templates: store}, postroom.OpSendTemplate, call)
	if results[0].Status != postroom.StatusSent {
		t.Fatalf("result %+v", results[0])
	}
	if got, want := body(t, msgs[0], "text/html"), "<html><body>\n<h1>Hi Ann</h1><footer>\nUnsubscribe\n</footer>\n</body></html>"; got != want {
		t.Errorf("html %q\nwant %q", got, want)
	}
}

// TestPartialsFollowTheStore sends twice with the same templates while
// the stored partial changes in between: each call renders the partial
// the store holds when the call starts, whatever the Mailer compiled
// before.
func TestPartialsFollowTheStore(t *testing.T) {
	store := partialStore(t, map[string]string{"footer": "v1"})
	mem := transport.NewMemory()
	m := newMailer(t, mem, postroom.Options{Templates: store})
	for _, want := range []string{"v1", "v2"} {
		if err := store.Put("acct", "footer", want); err != nil {
			t.Fatal(err)
		}
		call := smallCall("a@example.com")
		call.Message.HTML, call.Message.Text = "", "{{> footer}}"
		results, err := m.Send(t.Context(), call)
		if err != nil || results[0].Status != postroom.StatusSent {
			t.Fatalf("Send: %+v, %v", results, err)
		}
		env, _ := mem.Envelope(results[0].SendID)
		if got := body(t, postroomtest.Parse(t, env.Data), "text/plain"); got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
}

func TestPartialRefusals(t *testing.T) {
	sources := map[string]string{
		"a":      "{{> b}}",
		"b":      "{{> c}}",
		"c":      "c",
		"loop1":  "{{#if x}}{{> loop2}}{{/if}}",
		"loop2":  "{{> loop1}}",
		"self":   "{{> self}}",
		"broken": "{{#if x}}",
		"calls":  "{{> broken}}",
		"arity":  "{{money 1}}",
		"gone":   "{{> nowhere}}",
	}
	for _, tc := range []struct {
		name, html string
		opts       postroom.Options
		chain      []string
		is         error
	}{
		{"missing", "{{> nowhere}}", postroom.Options{}, []string{"nowhere"}, postroom.ErrTemplateNotFound},
		{"missing down a chain", "x {{> gone}}", postroom.Options{}, []string{"gone", "nowhere"}, postroom.ErrTemplateNotFound},
		{"cycle", "{{> loop1}}", postroom.Options{}, []string{"loop1", "loop2", "loop1"}, postroom.ErrPartialCycle},
		{"self", "{{> self}}", postroom.Options{}, []string{"self", "self"}, postroom.ErrPartialCycle},
		{"too deep", "{{> a}}", postroom.Options{MaxPartialDepth: 2}, []string{"a", "b", "c"}, postroom.ErrPartialTooDeep},
		{"syntax error", "{{> calls}}", postroom.Options{}, []string{"calls", "broken"}, postroom.ErrTemplateSyntax},
		{"helper arity in a partial", "{{> arity}}", postroom.Options{Helpers: map[string]postroom.Helper{"money": moneyHelper()}}, []string{"arity"}, postroom.ErrTemplateSyntax},
		{"in another account", "{{> other}}", postroom.Options{}, []string{"other"}, postroom.ErrTemplateNotFound},
		{"partial block outside a partial", "{{#> layout}}{{> @partial-block}}{{/layout}}", postroom.Options{}, nil, postroom.ErrTemplateSyntax},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := partialStore(t, sources)
			if err := store.Put("acct2", "other", "x"); err != nil {
				t.Fatal(err)
			}
			tc.opts.Templates = store
			call := smallCall("a@example.com")
			call.Message.HTML = tc.html
			mem := transport.NewMemory()
			results, err := newMailer(t, mem, tc.opts).Send(t.Context(), call)
			var ve *postroom.ValidationError
			if !errors.As(err, &ve) || results != nil {
				t.Fatalf("Send = %v, %v; want a ValidationError and no results", results, err)
			}
			if ve.Field != "message.html" {
				t.Errorf("Field %q, want message.html", ve.Field)
			}
			var ce *postroom.PartialChainError
			if errors.As(err, &ce) != (tc.chain != nil) || ce != nil && !slices.Equal(ce.Chain, tc.chain) {
				t.Errorf("chain %v, want %v (%v)", ce, tc.chain, err)
			}
			if !errors.Is(err, tc.is) {
				t.Errorf("err = %v, want %v", err, tc.is)
			}
			if mem.Len() != 0 {
				t.Errorf("%d messages sent", mem.Len())
			}
		})
	}
}

func TestPartialRefusalFields(t *testing.T) {
	store := partialStore(t, nil)
	call := smallCall("a@example.com")
	call.Message.Subject = "{{> s}}"
	call.Message.Text = "{{> t}}"
	call.Message.Headers = []postroom.Header{{Name: "X-Tag", Value: "{{> h}}"}}
	_, err := newMailer(t, transport.NewMemory(), postroom.Options{Templates: store}).Send(t.Context(), call)
	var fields []string
	var walk func(error)
	walk = func(err error) {
		if ve, ok := err.(*postroom.ValidationError); ok {
			fields = append(fields, ve.Field)
		}
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				walk(e)
			}
		}
	}
	walk(err)
	slices.Sort(fields)
	if want := []string{"message.headers[0].value", "message.subject", "message.text"}; !slices.Equal(fields, want) {
		t.Errorf("fields %v, want %v (%v)", fields, want, err)
	}
}

func TestPartialsWithoutStore(t *testing.T) {
	call := smallCall("a@example.com")
	call.Message.HTML = "{{> footer}}"
	_, err := newMailer(t, transport.NewMemory(), postroom.Options{}).Send(t.Context(), call)
	var ve *postroom.ValidationError
	if !errors.As(err, &ve) || ve.Field != "message.html" || !errors.Is(err, postroom.ErrTemplateNotFound) {
		t.Fatalf("err = %v, want a ValidationError on message.html wrapping ErrTemplateNotFound", err)
	}
}

// failingStore fails every lookup with err and counts them.
type failingStore struct {
	err   error
	calls atomic.Int32
}

func (s *failingStore) Template(ctx context.Context, accountID, id string) (string, error) {
	s.calls.Add(1)
	return "", s.err
}

func TestPartialStoreError(t *testing.T) {
	errDown := errors.New("store down")
	store := &failingStore{err: errDown}
	call := smallCall("a@example.com")
	call.Message.HTML = "{{> footer}}{{> footer}}"
	call.Message.Text = "{{> footer}}"
	_, err := newMailer(t, transport.NewMemory(), postroom.Options{Templates: store}).Send(t.Context(), call)
	var ve *postroom.ValidationError
	if !errors.Is(err, errDown) || errors.As(err, &ve) {
		t.Fatalf("err = %v, want the store's error, not a ValidationError", err)
	}
	if n := store.calls.Load(); n != 1 {
		t.Errorf("%d lookups, want 1", n)
	}
}

// TestPartialsAccepted are calls whose partials may be absent from the
// store: handlebars.js renders something in their place.
func TestPartialsAccepted(t *testing.T) {
	store := partialStore(t, map[string]string{"layout": "[{{> body}}]", "uses-inline": "{{> helper-inline}}"})
	for _, tc := range []struct{ name, html, want string }{
		{"partial block with a missing partial", "{{#> nowhere}}fallback{{/nowhere}}", "fallback"},
		{"inline partial used by a stored one", `{{#> layout}}{{#*inline "body"}}B{{/inline}}{{/layout}}`, "[B]"},
		{"inline partial defined after its use", `{{> uses-inline}}{{#*inline "helper-inline"}}I{{/inline}}`, "I"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			call := smallCall("a@example.com")
			call.Message.HTML, call.Message.Text = tc.html, ""
			results, msgs := sendParts(t, postroom.Options{Templates: store}, postroom.OpSend, call)
			if results[0].Status != postroom.StatusSent {
				t.Fatalf("result %+v", results[0])
			}
			if got := body(t, msgs[0], "text/html"); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestPartialRenderErrors: what only rendering finds makes the recipient
// invalid, never the call.
func TestPartialRenderErrors(t *testing.T) {
	store := partialStore(t, map[string]string{"p": "{{missing}}"})
	for _, tc := range []struct {
		name, html string
		strict     bool
		code       postroom.ReasonCode
	}{
		{"inline out of scope", `{{#if x}}{{#*inline "i"}}x{{/inline}}{{/if}}{{> i}}`, false, postroom.ReasonRenderError},
		{"missing param in a partial", "{{> p}}", true, postroom.ReasonMissingParam},
	} {
		t.Run(tc.name, func(t *testing.T) {
			call := smallCall("a@example.com")
			call.Message.HTML = tc.html
			results, _ := sendParts(t, postroom.Options{Templates: store, StrictParams: tc.strict}, postroom.OpSend, call)
			if r := results[0]; r.Status != postroom.StatusInvalid || r.Code != tc.code {
				t.Errorf("result %+v, want invalid %s", r, tc.code)
			}
		})
	}
}

// TestPartialsConcurrent renders partials for many recipients on many
// workers (run with -race): each recipient's message holds its own data.
func TestPartialsConcurrent(t *testing.T) {
	store := partialStore(t, map[string]string{"row": "<td>{{n}}</td>", "table": "<table>{{#each rows}}{{> row}}{{/each}}</table>"})
	call := smallCall()
	call.Message.HTML, call.Message.Text = "{{> table}}", "{{#each rows}}{{> row}}{{/each}}"
	for i := range 64 {
		call.Recipients = append(call.Recipients, postroom.Recipient{
			Email:  fmt.Sprintf("r%d@example.com", i),
			Params: map[string]any{"rows": []any{map[string]any{"n": i}, map[string]any{"n": -i}}},
		})
	}
	results, msgs := sendParts(t, postroom.Options{Templates: store, Concurrency: 8}, postroom.OpSend, call)
	for i, r := range results {
		if r.Status != postroom.StatusSent {
			t.Fatalf("recipient %d: %+v", i, r)
		}
		if got, want := body(t, msgs[i], "text/html"), fmt.Sprintf("<table><td>%d</td><td>%d</td></table>", i, -i); got != want {
			t.Errorf("recipient %d: %q, want %q", i, got, want)
		}
	}
}

// BenchmarkSendPartials sends a one-recipient call whose html is a layout
// of three stored partials, against the same html written out, through a
// Mailer whose template cache is warm: the per-call cost of fetching and
// linking partials.
func BenchmarkSendPartials(b *testing.B) {
	header, row, footer := "<h1>{{shop}}</h1>\n", "<tr><td>{{name}}</td><td>{{qty}}</td></tr>\n", "<p>© {{year}} {{shop}}</p>\n"
	store := templatestore.NewMemory()
	for id, src := range map[string]string{"header": header, "row": row, "footer": footer} {
		if err := store.Put("acct", id, src); err != nil {
			b.Fatal(err)
		}
	}
	params := map[string]any{"shop": "Shop", "year": 2026, "items": []any{
		map[string]any{"name": "tea", "qty": 2}, map[string]any{"name": "cup", "qty": 1},
	}}
	for _, bc := range []struct{ name, html string }{
		{"inline", header + "<table>\n{{#each items}}\n" + row + "{{/each}}\n</table>\n" + footer},
		{"partials", "{{> header}}\n<table>\n{{#each items}}\n{{> row}}\n{{/each}}\n</table>\n{{> footer}}\n"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			m := newMailer(b, transport.NewMemory(), postroom.Options{Templates: store})
			call := smallCall("a@example.com")
			call.Message.HTML, call.Message.Text = bc.html, ""
			call.Recipients[0].Params = params
			b.ReportAllocs()
			for b.Loop() {
				results, err := m.Send(b.Context(), call)
				if err != nil || results[0].Status != postroom.StatusSent {
					b.Fatalf("Send: %+v, %v", results, err)
				}
			}
		})
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
