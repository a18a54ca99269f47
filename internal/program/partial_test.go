package program

import (
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
)

// renderWith compiles src and every partial in mode and renders src with
// the partials as the call's table.
func renderWith(t *testing.T, mode Mode, src string, partials map[string]string, params map[string]any) (string, []string, error) {
	t.Helper()
	table := compileTable(t, mode, partials)
	p, err := Compile(t.Context(), src, Options{Mode: mode, MaxSteps: 100_000, MaxOutputBytes: 1 << 20})
	if err != nil {
		t.Fatalf("Compile(%q): %v", src, err)
	}
	d := &Data{Params: params, Partials: table}
	out, err := p.Append(t.Context(), nil, d)
	return string(out), d.Missing, err
}

func compileTable(t *testing.T, mode Mode, partials map[string]string) *Partials {
	t.Helper()
	table := &Partials{}
	for name, src := range partials {
		pp, err := Compile(t.Context(), src, Options{Mode: mode})
		if err != nil {
			t.Fatalf("Compile(partial %s %q): %v", name, src, err)
		}
		table.Add(name, pp)
	}
	return table
}

func dudes() map[string]any {
	return map[string]any{"dudes": []any{
		map[string]any{"name": "Yehuda", "link": "http://yehuda"},
		map[string]any{"name": "Alan", "link": "http://alan"},
	}}
}

// TestPartials holds the cases of handlebars.js 4.7's spec/partials.js that
// use static partial names, with their expected output, and cases of our own.
func TestPartials(t *testing.T) {
	for _, tc := range []struct {
		name     string
		src      string
		partials map[string]string
		params   map[string]any
		want     string
	}{
		{"basic partials", "Dudes: {{#dudes}}{{> dude}}{{/dudes}}", map[string]string{"dude": "{{name}} ({{link}}) "}, dudes(), "Dudes: Yehuda (http://yehuda) Alan (http://alan) "},
		{"partials with context", "Dudes: {{>dude dudes}}", map[string]string{"dude": "{{#this}}{{name}} ({{link}}) {{/this}}"}, dudes(), "Dudes: Yehuda (http://yehuda) Alan (http://alan) "},
		{"partials with string context", `Dudes: {{>dude "dudes"}}`, map[string]string{"dude": "{{.}}"}, nil, "Dudes: dudes"},
		{"partials with undefined context", "Dudes: {{>dude dudes}}", map[string]string{"dude": "{{foo}} Empty"}, nil, "Dudes:  Empty"},
		{"partials with parameters", "Dudes: {{#dudes}}{{> dude others=..}}{{/dudes}}", map[string]string{"dude": "{{others.foo}}{{name}} ({{link}}) "},
			map[string]any{"foo": "bar", "dudes": dudes()["dudes"]}, "Dudes: barYehuda (http://yehuda) barAlan (http://alan) "},
		{"partial in a partial", "Dudes: {{#dudes}}{{>dude}}{{/dudes}}", map[string]string{"dude": "{{name}} {{> url}} ", "url": `<a href="{{link}}">{{link}}</a>`}, dudes(),
			`Dudes: Yehuda <a href="http://yehuda">http://yehuda</a> Alan <a href="http://alan">http://alan</a> `},
		{"a partial preceding a selector", "Dudes: {{>dude}} {{anotherDude}}", map[string]string{"dude": "{{name}}"}, map[string]any{"name": "Jeepers", "anotherDude": "Creepers"}, "Dudes: Jeepers Creepers"},
		{"slash paths", "Dudes: {{> shared/dude}}", map[string]string{"shared/dude": "{{name}}"}, map[string]any{"name": "Jeepers"}, "Dudes: Jeepers"},
		{"slash and point paths", "Dudes: {{> shared/dude.thing}}", map[string]string{"shared/dude.thing": "{{name}}"}, map[string]any{"name": "Jeepers"}, "Dudes: Jeepers"},
		{"integer path", "Dudes: {{> 404}}", map[string]string{"404": "{{name}}"}, map[string]any{"name": "Jeepers"}, "Dudes: Jeepers"},
		{"escaped path", "Dudes: {{> [+404/asdf?.bar]}}", map[string]string{"+404/asdf?.bar": "{{name}}"}, map[string]any{"name": "Jeepers"}, "Dudes: Jeepers"},
		{"string name", "Dudes: {{> '+404/asdf?.bar'}}", map[string]string{"+404/asdf?.bar": "{{name}}"}, map[string]any{"name": "Jeepers"}, "Dudes: Jeepers"},
		{"empty partial", "Dudes: {{#dudes}}{{> dude}}{{/dudes}}", map[string]string{"dude": ""}, dudes(), "Dudes: "},
		{"indented partials", "Dudes:\n{{#dudes}}\n  {{>dude}}\n{{/dudes}}", map[string]string{"dude": "{{name}}\n"}, dudes(), "Dudes:\n  Yehuda\n  Alan\n"},
		{"nested indented partials", "Dudes:\n{{#dudes}}\n  {{>dude}}\n{{/dudes}}", map[string]string{"dude": "{{name}}\n {{> url}}", "url": "{{link}}!\n"}, dudes(),
			"Dudes:\n  Yehuda\n   http://yehuda!\n  Alan\n   http://alan!\n"},
		// Our own, checked against handlebars.js 4.7.8.
		{"indent applies to values with newlines", "<ul>\n  {{> item}}\n</ul>", map[string]string{"item": "<li>{{{a}}}</li>\n"}, map[string]any{"a": "x\ny"}, "<ul>\n  <li>x\n  y</li>\n</ul>"},
		{"indent keeps blank lines indented", "\t{{> p}}\n", map[string]string{"p": "a\n\nb"}, nil, "\ta\n\t\n\tb"},
		{"not standalone: no indent", "  {{> p}} x", map[string]string{"p": "a\nb"}, nil, "  a\nb x"},
		{"hash extends the context", "{{> p year=2026}}", map[string]string{"p": "{{name}} {{year}}"}, map[string]any{"name": "Ann"}, "Ann 2026"},
		{"hash over a context argument", "{{> p order shop=name}}", map[string]string{"p": "{{id}} at {{shop}}"}, map[string]any{"name": "A&B", "order": map[string]any{"id": 7}}, "7 at A&amp;B"},
		{"hash over a struct context", "{{> p order year=1}}", map[string]string{"p": "{{id}} {{year}}"}, map[string]any{"order": &struct {
			ID int `json:"id"`
		}{7}}, "7 1"},
		{"hash over a Go map context", "{{> p order year=1}}", map[string]string{"p": "{{id}} {{year}}"}, map[string]any{"order": map[string]int{"id": 7}}, "7 1"},
		{"hash value overrides", "{{> p name=\"B\"}}", map[string]string{"p": "{{name}}"}, map[string]any{"name": "A"}, "B"},
		{"parent is out of reach", "{{#with o}}{{> p}}{{/with}}", map[string]string{"p": "[{{../x}}][{{y}}]"}, map[string]any{"x": "X", "o": map[string]any{"y": "Y"}}, "[][Y]"},
		{"block params are out of reach", "{{#each list as |it|}}{{> p}}{{/each}}", map[string]string{"p": "[{{it}}]"}, map[string]any{"list": []any{"a"}}, "[]"},
		{"data variables are the caller's", "{{#each list}}{{> p}}{{/each}}", map[string]string{"p": "{{@index}}={{.}} "}, map[string]any{"list": []any{"a", "b"}}, "0=a 1=b "},
		{"@root is the call's root", "{{#with o}}{{> p}}{{/with}}", map[string]string{"p": "{{@root.x}}"}, map[string]any{"x": "X", "o": map[string]any{"y": 1}}, "X"},
		{"same partial twice", "{{> p}}{{> p}}", map[string]string{"p": "{{x}}"}, map[string]any{"x": 1}, "11"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _, err := renderWith(t, HTML, tc.src, tc.partials, tc.params)
			if err != nil {
				t.Fatalf("render: %v", err)
			}
			if got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestPartialModes(t *testing.T) {
	partials := map[string]string{"p": "{{x}}"}
	params := map[string]any{"x": "<b>"}
	if got, _, _ := renderWith(t, HTML, "{{> p}}", partials, params); got != "&lt;b&gt;" {
		t.Errorf("HTML: %q", got)
	}
	if got, _, _ := renderWith(t, Text, "{{> p}}", partials, params); got != "<b>" {
		t.Errorf("Text: %q", got)
	}
	// A table holds each mode apart: an HTML partial is not a text one.
	table := compileTable(t, HTML, partials)
	p, _ := Compile(t.Context(), "{{> p}}", Options{Mode: Text})
	if _, err := p.Append(t.Context(), nil, &Data{Partials: table}); err == nil {
		t.Errorf("a Text program found an HTML partial")
	}
}

func TestPartialMissingPaths(t *testing.T) {
	_, missing, err := renderWith(t, HTML, "{{a}}{{> p}}{{> p}}", map[string]string{"p": "{{a}}{{b}}"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(missing)
	// a is missing in the template and in the partial, b in the partial:
	// each program's paths are noted once per render.
	if want := []string{"a", "a", "b"}; !slices.Equal(missing, want) {
		t.Errorf("Missing = %q, want %q", missing, want)
	}
}

func TestPartialRenderErrors(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		partials  map[string]string
		limit     error
	}{
		{"missing partial", "{{> nope}}", nil, nil},
		{"partial block outside a partial", "{{> @partial-block}}", nil, nil},
		{"self-recursive partial", "{{> p}}", map[string]string{"p": "x{{> p}}"}, nil},
		{"output bound through indentation", strings.Repeat(" ", 30) + "{{> p}}\n", map[string]string{"p": strings.Repeat("\n", 50_000)}, ErrOutputTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := renderWith(t, HTML, tc.src, tc.partials, nil)
			var re *RenderError
			if !errors.As(err, &re) {
				t.Fatalf("err = %v, want a *RenderError", err)
			}
			if tc.limit != nil && !errors.Is(err, tc.limit) {
				t.Errorf("err = %v, want %v", err, tc.limit)
			}
		})
	}
}

func TestPartialCompileErrors(t *testing.T) {
	for _, tc := range []struct{ name, src string }{
		{"two context arguments", "{{> p a b}}"},
		{"dynamic partial", "{{> (lookup a b)}}"},
		{"unknown data partial", "{{> @foo}}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Compile(t.Context(), tc.src, Options{Mode: HTML})
			var ce *Error
			if !errors.As(err, &ce) || ce.Line != 1 {
				t.Fatalf("Compile(%q) = %v, want an *Error at line 1", tc.src, err)
			}
		})
	}
}

func TestPartialRefs(t *testing.T) {
	p, err := Compile(t.Context(), "{{> a}}\n{{#if x}}{{> b x}}{{/if}}{{> a}}{{> @partial-block}}", Options{Mode: HTML})
	if err != nil {
		t.Fatal(err)
	}
	want := []PartialRef{{Name: "a", Line: 1, Column: 1}, {Name: "b", Line: 2, Column: 10}}
	if got := p.Partials(); !slices.Equal(got, want) {
		t.Errorf("Partials() = %+v, want %+v", got, want)
	}
	if _, static := p.Static(); static {
		t.Errorf("a program with partials is static")
	}
	if ref, ok := p.PartialBlock(); !ok || ref.Line != 2 || ref.Column != 33 {
		t.Errorf("PartialBlock() = %+v, %v; want line 2, column 33", ref, ok)
	}
	q, err := Compile(t.Context(), `{{#*inline "l"}}{{> @partial-block}}{{/inline}}{{#> l}}x{{/l}}`, Options{Mode: HTML})
	if err != nil {
		t.Fatal(err)
	}
	if ref, ok := q.PartialBlock(); ok {
		t.Errorf("PartialBlock() = %+v inside an inline partial", ref)
	}
}

// TestPartialsConcurrent renders one program with one table from many
// goroutines (run with -race): the table and the programs are read-only.
func TestPartialsConcurrent(t *testing.T) {
	table := compileTable(t, HTML, map[string]string{"row": "  {{> cell}}\n", "cell": "<td>{{name}}</td>\n"})
	p, err := Compile(t.Context(), "<table>\n{{#each rows}}\n  {{> row}}\n{{/each}}\n</table>", Options{Mode: HTML})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			name := strings.Repeat("x", g)
			d := &Data{Params: map[string]any{"rows": []any{map[string]any{"name": name}}}, Partials: table}
			for range 50 {
				d.Missing, d.Written = d.Missing[:0], 0
				out, err := p.Append(t.Context(), nil, d)
				if want := "<table>\n    <td>" + name + "</td>\n</table>"; err != nil || string(out) != want {
					t.Errorf("got %q, %v; want %q", out, err, want)
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestPartialBlocks holds the cases of handlebars.js 4.7's spec/partials.js
// on partial blocks and inline partials, with their expected output. Where
// a case runs {{#with .}} over an empty root, the root holds x: an empty
// object is false for raymond's with (a difference of its own).
func TestPartialBlocks(t *testing.T) {
	ctxSuccess := map[string]any{"context": map[string]any{"value": "success"}}
	valueSuccess := map[string]any{"value": "success"}
	x := map[string]any{"x": 1}
	for _, tc := range []struct {
		name     string
		src      string
		partials map[string]string
		params   map[string]any
		want     string
	}{
		{"partial block as default", "{{#> dude}}success{{/dude}}", nil, nil, "success"},
		{"default block with proper context", "{{#> dude context}}{{value}}{{/dude}}", nil, ctxSuccess, "success"},
		{"block parameters in the default block", "{{#with context as |me|}}{{#> dude}}{{me.value}}{{/dude}}{{/with}}", nil, ctxSuccess, "success"},
		{"no partial block if the partial exists", "{{#> dude}}fail{{/dude}}", map[string]string{"dude": "success"}, nil, "success"},
		{"block from partial", "{{#> dude}}success{{/dude}}", map[string]string{"dude": "{{> @partial-block }}"}, nil, "success"},
		// The spec separates the two with a space, which raymond's whitespace
		// control strips (it takes the partial for a standalone one).
		{"partial-block twice", "{{#> dude}}success{{/dude}}", map[string]string{"dude": "{{> @partial-block }}-{{> @partial-block }}"}, nil, "success-success"},
		{"block from partial with context", "{{#> dude}}{{value}}{{/dude}}", map[string]string{"dude": "{{#with context}}{{> @partial-block }}{{/with}}"}, ctxSuccess, "success"},
		{"@data frame from a partial-block", "{{#> dude}}in-block: {{@root/value}}{{/dude}}", map[string]string{"dude": "<code>before-block: {{@root/value}} {{>   @partial-block }}</code>"},
			valueSuccess, "<code>before-block: success in-block: success</code>"},
		{"each with partial-blocks", "<template>{{#> list value}}value = {{.}}{{/list}}</template>", map[string]string{"list": "<list>{{#each .}}<item>{{> @partial-block}}</item>{{/each}}</list>"},
			map[string]any{"value": []any{"a", "b", "c"}}, "<template><list><item>value = a</item><item>value = b</item><item>value = c</item></list></template>"},
		{"block from partial with context twice", "{{#> dude}}{{value}}{{/dude}}", map[string]string{"dude": "{{#with context}}{{> @partial-block }} {{> @partial-block }}{{/with}}"}, ctxSuccess, "success success"},
		{"block from partial with parent context", "{{#> dude}}{{../context/value}}{{/dude}}", map[string]string{"dude": "{{#with context}}{{> @partial-block }}{{/with}}"}, ctxSuccess, "success"},
		{"block from partial with block params", "{{#with context as |me|}}{{#> dude}}{{me.value}}{{/dude}}{{/with}}", map[string]string{"dude": "{{> @partial-block }}"}, ctxSuccess, "success"},
		{"nested partial blocks", "<template>{{#> outer}}{{value}}{{/outer}}</template>", map[string]string{
			"outer":  "<outer>{{#> nested}}<outer-block>{{> @partial-block}}</outer-block>{{/nested}}</outer>",
			"nested": "<nested>{{> @partial-block}}</nested>"}, valueSuccess,
			"<template><outer><nested><outer-block>success</outer-block></nested></outer></template>"},
		{"nested partial blocks at different levels", "<template>{{#> outer}}{{value}}{{/outer}}</template>", map[string]string{
			"outer":  "<outer>{{#> nested}}<outer-block>{{> @partial-block}}</outer-block>{{/nested}}{{> @partial-block}}</outer>",
			"nested": "<nested>{{> @partial-block}}</nested>"}, valueSuccess,
			"<template><outer><nested><outer-block>success</outer-block></nested>success</outer></template>"},
		{"nested partial blocks twice at each level", "<template>{{#> outer}}{{value}}{{/outer}}</template>", map[string]string{
			"outer":  "<outer>{{#> nested}}<outer-block>{{> @partial-block}} {{> @partial-block}}</outer-block>{{/nested}}</outer>",
			"nested": "<nested>{{> @partial-block}}{{> @partial-block}}</nested>"}, valueSuccess,
			"<template><outer><nested><outer-block>success success</outer-block><outer-block>success success</outer-block></nested></outer></template>"},
		{"inline partials for template", `{{#*inline "myPartial"}}success{{/inline}}{{> myPartial}}`, nil, nil, "success"},
		{"inline partial overwritten", `{{#*inline "myPartial"}}fail{{/inline}}{{#*inline "myPartial"}}success{{/inline}}{{> myPartial}}`, nil, nil, "success"},
		{"inline partials for block", `{{#with .}}{{#*inline "myPartial"}}success{{/inline}}{{> myPartial}}{{/with}}`, nil, x, "success"},
		{"inline overrides the table", `{{#*inline "myPartial"}}success{{/inline}}{{> myPartial}}`, map[string]string{"myPartial": "fail"}, nil, "success"},
		{"inline overrides template partials", `{{#*inline "myPartial"}}fail{{/inline}}{{#with .}}{{#*inline "myPartial"}}success{{/inline}}{{> myPartial}}{{/with}}`, nil, x, "success"},
		{"inline down the entire stack", `{{#with .}}{{#*inline "myPartial"}}success{{/inline}}{{#with .}}{{#with .}}{{> myPartial}}{{/with}}{{/with}}{{/with}}`, nil, x, "success"},
		{"inline partials for partial call", `{{#*inline "myPartial"}}success{{/inline}}{{> dude}}`, map[string]string{"dude": "{{> myPartial }}"}, nil, "success"},
		{"inline partials in partial block call", `{{#> dude}}{{#*inline "myPartial"}}success{{/inline}}{{/dude}}`, map[string]string{"dude": "{{> myPartial }}"}, nil, "success"},
		{"nested inline partials", `{{#*inline "outer"}}{{#>inner}}<outer-block>{{>@partial-block}}</outer-block>{{/inner}}{{/inline}}` +
			`{{#*inline "inner"}}<inner>{{>@partial-block}}</inner>{{/inline}}{{#>outer}}{{value}}{{/outer}}`, nil, valueSuccess,
			"<inner><outer-block>success</outer-block></inner>"},
		{"nested inline partials at different levels", `{{#*inline "outer"}}{{#>inner}}<outer-block>{{>@partial-block}}</outer-block>{{/inner}}{{>@partial-block}}{{/inline}}` +
			`{{#*inline "inner"}}<inner>{{>@partial-block}}</inner>{{/inline}}{{#>outer}}{{value}}{{/outer}}`, nil, valueSuccess,
			"<inner><outer-block>success</outer-block></inner>success"},
		{"nested inline partials twice at each level", `{{#*inline "outer"}}{{#>inner}}<outer-block>{{>@partial-block}} {{>@partial-block}}</outer-block>{{/inner}}{{/inline}}` +
			`{{#*inline "inner"}}<inner>{{>@partial-block}}{{>@partial-block}}</inner>{{/inline}}{{#>outer}}{{value}}{{/outer}}`, nil, valueSuccess,
			"<inner><outer-block>success success</outer-block><outer-block>success success</outer-block></inner>"},
		// Our own, checked against handlebars.js 4.7.8: the layout pattern
		// of an email.
		{"layout", "{{#> layout heading=subject}}\n{{#*inline \"body\"}}\n<p>Hi {{name}}</p>\n{{/inline}}\n{{/layout}}\n",
			map[string]string{"layout": "<html><title>{{heading}}</title>\n<body>\n  {{> body}}\n</body></html>\n"},
			map[string]any{"subject": "Order", "name": "Ann"},
			"<html><title>Order</title>\n<body>\n  <p>Hi Ann</p>\n</body></html>\n"},
		{"standalone partial block lines", "a\n{{#> p}}\nx\n{{/p}}\nb", nil, nil, "a\nx\nb"},
		{"the same context is not pushed again", "{{#> dude}}{{../x}}|{{x}}{{/dude}}", map[string]string{"dude": "{{> @partial-block}}"}, map[string]any{"x": "X"}, "|X"},
		{"indented partial block", "{{#> l}}a\nb\n{{/l}}", map[string]string{"l": "<div>\n  {{> @partial-block}}\n</div>"}, nil, "<div>\n  a\n  b\n</div>"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _, err := renderWith(t, HTML, tc.src, tc.partials, tc.params)
			if err != nil {
				t.Fatalf("render: %v", err)
			}
			if got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestInlinePartialErrors(t *testing.T) {
	t.Run("out of scope", func(t *testing.T) {
		_, _, err := renderWith(t, HTML, `{{#with .}}{{#*inline "myPartial"}}success{{/inline}}{{/with}}{{> myPartial}}`, nil, map[string]any{"x": 1})
		var re *RenderError
		if !errors.As(err, &re) {
			t.Fatalf("err = %v, want a *RenderError", err)
		}
	})
	for _, tc := range []struct{ name, src string }{
		{"other decorator", `{{#*deco "x"}}y{{/deco}}`},
		{"decorator mustache", `{{*deco}}`},
		{"inline without a name", `{{#*inline}}y{{/inline}}`},
		{"inline with a path name", `{{#*inline x}}y{{/inline}}`},
		{"inline with else", `{{#*inline "x"}}y{{else}}z{{/inline}}`},
		{"partial block with else", `{{#> x}}y{{else}}z{{/x}}`},
		{"partial block closed by another name", `{{#> x}}y{{/z}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Compile(t.Context(), tc.src, Options{Mode: HTML})
			var ce *Error
			if !errors.As(err, &ce) || ce.Line != 1 {
				t.Fatalf("Compile(%q) = %v, want an *Error at line 1", tc.src, err)
			}
		})
	}
}

func TestInlineRefs(t *testing.T) {
	p, err := Compile(t.Context(), `{{#> layout}}{{#*inline "body"}}x{{/inline}}{{/layout}}{{> body}}{{> footer}}`, Options{Mode: HTML})
	if err != nil {
		t.Fatal(err)
	}
	want := []PartialRef{{Name: "layout", Line: 1, Column: 1, Optional: true}, {Name: "body", Line: 1, Column: 56, Optional: true}, {Name: "footer", Line: 1, Column: 66}}
	if got := p.Partials(); !slices.Equal(got, want) {
		t.Errorf("Partials() = %+v\nwant %+v", got, want)
	}
	if got := p.Inline(); !slices.Equal(got, []string{"body"}) {
		t.Errorf("Inline() = %q", got)
	}
}

// BenchmarkPartial renders a table whose row is a partial, against the
// same template with the row written inline: the cost of a partial call.
func BenchmarkPartial(b *testing.B) {
	rows := make([]any, 100)
	for i := range rows {
		rows[i] = map[string]any{"name": "row", "n": float64(i)}
	}
	params := map[string]any{"rows": rows}
	table := &Partials{}
	row, err := Compile(b.Context(), "<td>{{name}}</td><td>{{n}}</td>", Options{Mode: HTML})
	if err != nil {
		b.Fatal(err)
	}
	table.Add("row", row)
	for _, bc := range []struct{ name, src string }{
		{"inline", "{{#each rows}}<tr><td>{{name}}</td><td>{{n}}</td></tr>{{/each}}"},
		{"partial", "{{#each rows}}<tr>{{> row}}</tr>{{/each}}"},
		{"partial with hash", "{{#each rows}}<tr>{{> row n=@index}}</tr>{{/each}}"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			p, err := Compile(b.Context(), bc.src, Options{Mode: HTML})
			if err != nil {
				b.Fatal(err)
			}
			d := &Data{Params: params, Partials: table}
			var out []byte
			b.ReportAllocs()
			for b.Loop() {
				d.Missing, d.Written = d.Missing[:0], 0
				if out, err = p.Append(b.Context(), out[:0], d); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
