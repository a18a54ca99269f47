package postroom_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/templatestore"
	"github.com/postroom/postroom/transport"
)

func TestCheckTemplate(t *testing.T) {
	opts := helperOptions()
	opts.Auth = postroom.NoAuth{}
	opts.MaxTemplateBytes = 1 << 10
	m, err := postroom.New(transport.NewMemory(), opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, src    string
		line, column int // 0, 0 with ok: compiles
		ok           bool
	}{
		{name: "plain", src: "<p>Hello</p>", ok: true},
		{name: "params_and_blocks", src: "<p>Hi {{name}}</p>{{#each items}}<li>{{this}}</li>{{/each}}", ok: true},
		{name: "own_helper", src: "{{money total currency}}", ok: true},
		{name: "partial_not_stored", src: "{{> footer}}", ok: true},
		{name: "partial_block", src: "<div>{{> @partial-block}}</div>", ok: true},
		{name: "unclosed_block", src: "<p>Hi</p>\n<ul>\n  {{#each items}}<li>{{this}}</li>\n</ul>", line: 3, column: 3},
		{name: "closed_by_another", src: "{{#if a}}\nx{{/each}}", line: 2, column: 2},
		{name: "unknown_helper", src: "line one\n  {{nosuch a b}}", line: 2, column: 5},
		{name: "helper_arity", src: "{{money total}}", line: 1, column: 3},
		{name: "too_large", src: strings.Repeat("x", 2<<10)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := m.CheckTemplate(t.Context(), tc.src)
			if tc.ok {
				if err != nil {
					t.Fatalf("CheckTemplate: %v", err)
				}
				return
			}
			var te *postroom.TemplateError
			if !errors.As(err, &te) || !errors.Is(err, postroom.ErrTemplateSyntax) {
				t.Fatalf("CheckTemplate: %v, want a *TemplateError wrapping ErrTemplateSyntax", err)
			}
			if te.Line != tc.line || te.Column != tc.column || te.Reason == "" {
				t.Errorf("CheckTemplate: %+v, want line %d, column %d and a reason", te, tc.line, tc.column)
			}
		})
	}

	t.Run("canceled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if err := m.CheckTemplate(ctx, "{{#if a}}"); !errors.Is(err, context.Canceled) {
			t.Errorf("CheckTemplate: %v, want context.Canceled", err)
		}
	})
	t.Run("zero_mailer", func(t *testing.T) {
		if err := new(postroom.Mailer).CheckTemplate(t.Context(), "x"); !errors.Is(err, postroom.ErrZeroMailer) {
			t.Errorf("CheckTemplate: %v, want ErrZeroMailer", err)
		}
	})
}

// TestCheckTemplateAgreesWithCalls: a source CheckTemplate refuses is
// refused by a call using it, at the same line and column, and one it
// takes is sent.
func TestCheckTemplateAgreesWithCalls(t *testing.T) {
	store := templatestore.NewMemory()
	m, err := postroom.New(transport.NewMemory(), postroom.Options{Auth: postroom.NoAuth{}, Templates: store})
	if err != nil {
		t.Fatal(err)
	}
	for i, src := range []string{"<p>{{a}}</p>", "a\n{{#with}}x{{/with}}", "{{#each x}}\n\n   {{/if}}", "{{{a}}"} {
		if err := store.Put("acme", "t", src); err != nil {
			t.Fatal(err)
		}
		checkErr := m.CheckTemplate(t.Context(), src)
		call := &postroom.Call{AccountID: "acme", Message: postroom.Message{FromEmail: "shop@example.com", Subject: "s", HTMLTemplateID: "t"},
			Recipients: []postroom.Recipient{{Email: "ann@example.org"}}}
		_, callErr := m.Validate(t.Context(), postroom.OpSendTemplate, call)
		if (checkErr == nil) != (callErr == nil) {
			t.Fatalf("source %d: CheckTemplate %v, call %v", i, checkErr, callErr)
		}
		if checkErr == nil {
			continue
		}
		var te *postroom.TemplateError
		if !errors.As(checkErr, &te) {
			t.Fatalf("source %d: %v", i, checkErr)
		}
		ves := postroom.ValidationErrors(callErr)
		if len(ves) != 1 || !errors.Is(ves[0], postroom.ErrTemplateSyntax) || !strings.HasPrefix(ves[0].Reason, strings.TrimPrefix(te.Error(), "postroom: ")) {
			t.Errorf("source %d: call refused with %v, CheckTemplate with %v", i, callErr, te)
		}
	}
}

func TestRenderTemplate(t *testing.T) {
	store := templatestore.NewMemory()
	if err := store.Put("acme", "footer", "<footer>{{shop}}</footer>"); err != nil {
		t.Fatal(err)
	}
	m, err := postroom.New(transport.NewMemory(), postroom.Options{Auth: postroom.StaticKeys{"acme": {"k"}}, Templates: store})
	if err != nil {
		t.Fatal(err)
	}
	r, err := m.RenderTemplate(t.Context(), postroom.TemplateSample{
		AccountID: "acme", Key: "k",
		Subject: "Order {{order}}",
		HTML:    "<p>Hi {{name}}, {{missing}}</p>{{> footer}}",
		Params:  postroom.Params{"name": "<Ann>", "order": 7, "shop": "Acme"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if r.Subject != "Order 7" || r.HTML != "<p>Hi &lt;Ann&gt;, </p><footer>Acme</footer>" {
		t.Errorf("rendered subject %q, html %q", r.Subject, r.HTML)
	}
	if !slices.Equal(r.Missing, []string{"missing"}) || r.Result.Status != postroom.StatusSent {
		t.Errorf("missing %v, result %+v", r.Missing, r.Result)
	}

	_, err = m.RenderTemplate(t.Context(), postroom.TemplateSample{AccountID: "acme", Key: "wrong", HTML: "x"})
	if !errors.Is(err, postroom.ErrUnauthorized) {
		t.Errorf("wrong key: %v, want ErrUnauthorized", err)
	}
	_, err = m.RenderTemplate(t.Context(), postroom.TemplateSample{AccountID: "acme", Key: "k", Text: "{{> nosuch}}"})
	if ves := postroom.ValidationErrors(err); len(ves) != 1 || ves[0].Field != "message.text" || !errors.Is(ves[0], postroom.ErrTemplateNotFound) {
		t.Errorf("missing partial: %v", err)
	}
}
