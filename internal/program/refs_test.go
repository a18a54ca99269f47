package program

import (
	"context"
	"slices"
	"testing"
)

// TestParams checks the referenced params of each construct, written from
// the root of the data.
func TestParams(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      []string
	}{
		{"static", "no placeholder", nil},
		{"values", "{{b}} {{{a}}} {{&c.d}} {{b}}", []string{"a", "b", "c.d"}},
		{"condition", "{{#if vip}}VIP{{else}}{{name}}{{/if}}", []string{"name", "vip"}},
		{"each", "{{#each items}}{{name}} {{@index}} {{this}}{{/each}}", []string{"items", "items.name"}},
		{"each block params", "{{#each items as |item i|}}{{item.name}}{{i}}{{/each}}", []string{"items", "items.name"}},
		{"section", "{{#order}}{{id}}{{#lines}}{{sku}}{{/lines}}{{/order}}", []string{"order", "order.id", "order.lines", "order.lines.sku"}},
		{"with and parent", "{{#with order}}{{id}} {{../name}} {{@root.year}}{{/with}}", []string{"name", "order", "order.id", "year"}},
		{"inverse keeps the context", "{{#each items}}{{name}}{{else}}{{empty_text}}{{/each}}", []string{"empty_text", "items", "items.name"}},
		{"helper arguments", `{{upper (default nick first_name)}} {{#eq status "paid"}}{{total}}{{/eq}}`, []string{"first_name", "nick", "status", "total"}},
		{"unknown context", "{{#with (lookup obj key)}}{{inner}}{{/with}}", []string{"key", "obj"}},
		{"literal field", `{{"weird key"}}`, []string{"weird key"}},
		{"brackets", "{{[weird key].x}}", []string{"weird key.x"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Compile(context.Background(), tc.src, Options{Mode: HTML})
			if err != nil {
				t.Fatal(err)
			}
			if got := p.Params(); !slices.Equal(got, tc.want) {
				t.Errorf("Params() = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestParamsCoverMissing is the oracle: rendered with no data, a template
// notes as missing every output path it reaches, and each of them must be
// among its Params (paths outside blocks are written from the root).
func TestParamsCoverMissing(t *testing.T) {
	for _, src := range []string{
		"{{a}} {{b.c}} {{#if x}}{{y}}{{/if}} {{upper d}}",
		"Your order #{{order_id}} is confirmed, {{first_name}}",
		"{{#each items}}{{name}}{{/each}}{{total}}{{#unless vip}}{{promo}}{{/unless}}",
	} {
		p, err := Compile(context.Background(), src, Options{Mode: Text})
		if err != nil {
			t.Fatal(err)
		}
		d := &Data{}
		if _, err := p.Append(context.Background(), nil, d); err != nil {
			t.Fatal(err)
		}
		if len(d.Missing) == 0 {
			t.Fatalf("%q: nothing missing with no data", src)
		}
		params := p.Params()
		for _, m := range d.Missing {
			if !slices.Contains(params, m) {
				t.Errorf("%q: missing %q is not among Params() %q", src, m, params)
			}
		}
	}
}
