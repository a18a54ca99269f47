package program

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
)

var errBadCurrency = errors.New("bad currency")

func testHelpers() map[string]*Helper {
	return map[string]*Helper{
		"money": {Min: 2, Max: 2, Func: func(c *HelperCall) (any, error) {
			if c.Args[1] != "EUR" {
				return nil, fmt.Errorf("%w: %v", errBadCurrency, c.Args[1])
			}
			return fmt.Sprintf("€%.2f", c.Args[0]), nil
		}},
		"year":  {Max: 0, Func: func(*HelperCall) (any, error) { return 2026, nil }},
		"bold":  {Min: 1, Max: 1, Func: func(c *HelperCall) (any, error) { return Raw("<b>" + c.Args[0].(string) + "</b>"), nil }},
		"plain": {Min: 1, Max: 1, Func: func(c *HelperCall) (any, error) { return "<i>" + c.Args[0].(string) + "</i>", nil }},
		"join": {Min: 0, Max: -1, Hash: true, Func: func(c *HelperCall) (any, error) {
			sep, _ := c.Hash["sep"].(string)
			var parts []string
			for _, a := range c.Args {
				s, err := Str(a)
				if err != nil {
					return nil, err
				}
				parts = append(parts, s)
			}
			return strings.Join(parts, sep), nil
		}},
		"boom": {Max: -1, Func: func(*HelperCall) (any, error) { panic("kaboom") }},
		"twice": {Block: true, Max: 0, Func: func(c *HelperCall) (any, error) {
			a, err := c.Fn(nil)
			if err != nil {
				return nil, err
			}
			return a + a, nil
		}},
		"otherwise": {Block: true, Min: 1, Max: 1, Func: func(c *HelperCall) (any, error) {
			if Truthy(c.Args[0]) {
				return c.Fn(c.Args[0])
			}
			return c.Inverse(nil)
		}},
	}
}

func renderCustom(t *testing.T, mode Mode, src string, params map[string]any) (string, error) {
	t.Helper()
	p, err := Compile(t.Context(), src, Options{Mode: mode, Helpers: testHelpers(), MaxSteps: 10_000})
	if err != nil {
		t.Fatalf("Compile(%q): %v", src, err)
	}
	out, err := p.Append(t.Context(), nil, &Data{Params: params})
	return string(out), err
}

func TestCustomHelpers(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		mode      Mode
		params    map[string]any
		want      string
	}{
		{"typed arguments", "{{money total currency}}", HTML, map[string]any{"total": 1234.5, "currency": "EUR"}, "€1234.50"},
		{"no arguments shadows a param", "{{year}} {{this.year}}", HTML, map[string]any{"year": 1999}, "2026 1999"},
		{"escaped", "{{plain x}}", HTML, map[string]any{"x": "a"}, "&lt;i&gt;a&lt;/i&gt;"},
		{"raw", "{{bold x}}", HTML, map[string]any{"x": "a"}, "<b>a</b>"},
		{"text mode never escapes", "{{plain x}}", Text, map[string]any{"x": "a"}, "<i>a</i>"},
		{"hash", `{{join a b "c" sep=", "}}`, HTML, map[string]any{"a": 1, "b": true}, "1, true, c"},
		{"subexpression", `{{upper (join a a)}}`, HTML, map[string]any{"a": "x"}, "XX"},
		{"as an argument of a block", `{{#if (join a)}}y{{else}}n{{/if}}`, HTML, map[string]any{"a": ""}, "n"},
		{"block helper", "{{#twice}}<{{x}}>{{/twice}}", HTML, map[string]any{"x": "&"}, "<&amp;><&amp;>"},
		{"block helper with context and inverse", "{{#otherwise o}}{{y}}{{else}}none{{/otherwise}}|{{#otherwise z}}{{y}}{{else}}none{{/otherwise}}", HTML,
			map[string]any{"o": map[string]any{"y": "Y"}}, "Y|none"},
		{"in each", "{{#each list}}{{join @index .}};{{/each}}", HTML, map[string]any{"list": []any{"a", "b"}}, "0a;1b;"},
		{"a block parameter wins over a helper", "{{#each list as |year|}}{{year}}{{/each}}{{year}}", HTML, map[string]any{"list": []any{"a", "b"}}, "ab2026"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := renderCustom(t, tc.mode, tc.src, tc.params)
			if err != nil || got != tc.want {
				t.Errorf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestCustomHelperCompileErrors(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		col       int
	}{
		{"too few arguments", "ab{{money total}}", 5},
		{"too many arguments", "{{money a b c}}", 3},
		{"arguments to a helper of none", "{{year 1}}", 3},
		{"hash to a helper without", "{{money a b c=1}}", 13},
		{"block of a non-block helper", "{{#money a b}}x{{/money}}", 4},
		{"subexpression arity", "{{join (money a)}}", 9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Compile(t.Context(), tc.src, Options{Mode: HTML, Helpers: testHelpers()})
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("Compile(%q) = %v, want an *Error", tc.src, err)
			}
			if ce.Line != 1 || ce.Column != tc.col {
				t.Errorf("at %d:%d, want 1:%d (%v)", ce.Line, ce.Column, tc.col, ce)
			}
		})
	}
}

func TestCustomHelperRenderErrors(t *testing.T) {
	t.Run("error", func(t *testing.T) {
		_, err := renderCustom(t, HTML, "{{money 1 \"USD\"}}", nil)
		var re *RenderError
		if !errors.As(err, &re) || !errors.Is(err, errBadCurrency) {
			t.Fatalf("err = %v, want a *RenderError wrapping the helper's error", err)
		}
	})
	t.Run("panic", func(t *testing.T) {
		out, err := renderCustom(t, HTML, "before{{boom}}", nil)
		var re *RenderError
		if !errors.As(err, &re) || out != "" {
			t.Fatalf("got %q, %v; want a *RenderError and no output", out, err)
		}
	})
	t.Run("limit inside a block", func(t *testing.T) {
		_, err := renderCustom(t, HTML, "{{#twice}}{{#each big}}x{{/each}}{{/twice}}", map[string]any{"big": make([]any, 20_000)})
		if !errors.Is(err, ErrTooManySteps) {
			t.Fatalf("err = %v, want ErrTooManySteps", err)
		}
	})
}

func TestCustomHelpersConcurrent(t *testing.T) {
	p, err := Compile(t.Context(), "{{#each items}}{{money this ../cur}} {{/each}}", Options{Mode: HTML, Helpers: testHelpers()})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			d := &Data{Params: map[string]any{"items": []any{float64(g), 1.5}, "cur": "EUR"}}
			want := fmt.Sprintf("€%d.00 €1.50 ", g)
			for range 100 {
				out, err := p.Append(t.Context(), nil, d)
				if err != nil || string(out) != want {
					t.Errorf("got %q, %v; want %q", out, err, want)
					return
				}
			}
		})
	}
	wg.Wait()
}
