package program

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/postroom/postroom/internal/testkit/hbsjs"
)

// testParams are the parameters of the construct table, as encoding/json
// produces them.
func testParams(t testing.TB) (params, globals map[string]any) {
	t.Helper()
	const p = `{
		"name": "Tom & Jerry's <b>\"x\"</b>",
		"first_name": "Zoë",
		"n": 3, "f": 2.5, "zero": 0, "neg": -1.25, "big": 1e21,
		"yes": true, "no": false, "nothing": null, "empty": "",
		"items": [
			{"name": "a<1>", "qty": 1, "price": "$1"},
			{"name": "b&2", "qty": 2, "price": "$2", "tags": ["x", "y"]},
			{"name": "c", "qty": 3}
		],
		"nums": [1, 2.5, "three", true, null],
		"matrix": [[1, 2], [3]],
		"none": [],
		"obj": {"b": 2, "a": "one", "c": {"d": "deep"}},
		"one": {"only": "value"},
		"emptyobj": {},
		"order": {"id": "ORD-1", "lines": [{"sku": "S1"}, {"sku": "S2"}]},
		"when": "2024-03-05T10:20:30Z",
		"html": "<p>Hi <b>there</b></p>",
		"weird key": "spaced",
		"num_str": "10"
	}`
	if err := json.Unmarshal([]byte(p), &params); err != nil {
		t.Fatal(err)
	}
	globals = map[string]any{"company": "Shop & Co", "year": float64(2024), "name": "global name", "g": map[string]any{"x": "gx"}}
	return params, globals
}

// constructCases are templates raymond and this package must render alike
// in HTML mode.
var constructCases = []struct{ name, src string }{
	{"content only", "hello, world"},
	{"comment", "a{{! c }}b{{!-- {{x}} --}}c"},
	{"path", "{{first_name}}"},
	{"escaped", "{{name}}"},
	{"triple", "{{{name}}}"},
	{"ampersand", "{{&name}}"},
	{"global", "{{company}} {{year}}"},
	{"param overrides global", "{{name}}"},
	{"numbers", "{{n}} {{f}} {{zero}} {{neg}} {{big}}"},
	{"bools and null", "[{{yes}}][{{no}}][{{nothing}}][{{empty}}]"},
	{"missing", "[{{missing}}][{{missing.deep}}][{{obj.missing}}]"},
	{"nested", "{{obj.a}} {{obj.c.d}} {{order.id}}"},
	{"this", "{{#with obj}}{{this.a}} {{./a}} {{a}}{{/with}}"},
	{"array print", "{{nums}}|{{matrix}}"},
	{"map print", "{{obj}}|{{one}}|{{emptyobj}}"},
	{"index segment", "{{items.[1].name}} {{items.[0].name}} {{nums.[2]}} {{nums.[9]}} {{matrix.[0].[1]}}"},
	{"bracket segment", "{{[weird key]}}"},
	{"if", "{{#if yes}}y{{/if}}{{#if no}}n{{/if}}{{#if zero}}z{{/if}}{{#if none}}e{{/if}}{{#if obj}}o{{/if}}"},
	{"if else", "{{#if no}}a{{else}}b{{/if}}{{#if empty}}a{{^}}c{{/if}}"},
	{"else if chain", "{{#if no}}1{{else if zero}}2{{else if n}}3{{else}}4{{/if}}"},
	{"unless", "{{#unless no}}a{{else}}b{{/unless}}{{#unless yes}}c{{else}}d{{/unless}}"},
	{"include zero", "{{#if 0 includeZero=true}}z{{else}}nz{{/if}}{{#if zero includeZero=true}}z{{else}}nz{{/if}}"},
	{"each array", "{{#each items}}{{@index}}:{{name}}:{{qty}}{{#if @first}}F{{/if}}{{#if @last}}L{{/if}};{{/each}}"},
	{"each map sorted", "{{#each obj}}{{@key}}={{this}};{{/each}}"},
	{"each one-key map", "{{#each one}}{{@key}}={{.}}@{{@index}}{{@first}}{{@last}}{{/each}}"},
	{"each else", "{{#each none}}x{{else}}empty{{/each}}{{#each missing}}x{{else}}gone{{/each}}"},
	{"each parent", "{{#each items}}{{../company}}/{{company}}/{{@root.first_name}};{{/each}}"},
	{"each nested", "{{#each order.lines}}{{#each ../items}}{{../sku}}-{{name}}({{@../index}}.{{@index}}) {{/each}}{{/each}}"},
	{"each block params", "{{#each items as |item i|}}{{i}}={{item.name}}/{{item.qty}} {{/each}}"},
	{"each map block params", "{{#each obj as |v k|}}{{k}}:{{v}} {{/each}}"},
	{"each scalars", "{{#each nums}}[{{this}}]{{/each}}"},
	{"each matrix", "{{#each matrix}}({{#each this}}{{this}}{{/each}}){{/each}}"},
	{"each nulls keep context", "{{#each nums}}{{#if this}}{{else}}<{{first_name}}>{{/if}}{{/each}}"},
	{"with", "{{#with order}}{{id}} {{#each lines}}{{sku}}{{/each}}{{/with}}{{#with missing}}x{{else}}w{{/with}}"},
	{"with block param", "{{#with order as |o|}}{{o.id}}{{/with}}"},
	{"section array", "{{#items}}{{name}},{{/items}}"},
	{"section object", "{{#order}}{{id}}{{/order}}"},
	{"section bool", "{{#yes}}{{first_name}}{{/yes}}{{#no}}x{{/no}}"},
	{"inverse section", "{{^no}}not{{/no}}{{^yes}}x{{/yes}}{{^none}}empty{{/none}}"},
	{"array context projection", "{{#with items}}[{{name}}][{{qty}}][{{tags}}]{{/with}}"},
	{"root", "{{#with obj}}{{@root.first_name}}{{/with}}"},
	{"data fallback", "{{@first_name}}|{{@index}}"},
	{"lookup", "{{lookup obj \"a\"}} {{lookup items 1}} {{#each items}}{{lookup ../obj \"b\"}}{{/each}}"},
	{"lookup dynamic", "{{#each obj}}{{lookup ../obj @key}};{{/each}}"},
	{"equal", "{{#equal n 3}}three{{/equal}}{{#equal n \"3\"}}str{{/equal}}{{#equal n 4}}four{{else}}x{{/equal}}"},
	{"log", "a{{log first_name}}b"},
	{"literal field", "{{\"first_name\"}}{{#with items}}{{1}}{{/with}}"},
	{"whitespace control", "a  {{~first_name~}}  b\n{{#if yes~}}\n  c\n{{~/if}}"},
	{"standalone lines", "<ul>\n  {{#each items}}\n  <li>{{name}}</li>\n  {{/each}}\n</ul>\n"},
	{"raw block", "{{{{yes}}}}{{not parsed}}{{{{/yes}}}}"},
	{"escaped mustache", "\\{{first_name}} {{first_name}}"},
	{"upper lower title", "{{upper first_name}} {{lower name}} {{title \"hello big  world\"}}"},
	{"default", "{{default missing \"fallback\"}} {{default first_name \"x\"}} {{default zero n}}"},
	{"eq ne", "{{eq n 3}} {{eq n \"3\"}} {{eq f 2.5}} {{ne n 4}} {{eq yes true}} {{eq nothing missing}}"},
	{"gt lt", "{{gt n 2}} {{lt n 2}} {{gt num_str 9}} {{lt \"a\" 1}} {{gt f \"2.4\"}}"},
	{"and or not", "{{and yes n}} {{and yes zero}} {{or no empty}} {{or no n}} {{not empty}} {{not obj}}"},
	{"and or three", "{{and yes n f}} {{and yes n zero}} {{or no empty n}} {{or no zero empty}}"},
	{"length", "{{length first_name}} {{length items}} {{length obj}} {{length missing}} {{length n}}"},
	{"url", "{{url name}}"},
	{"striptags", "{{striptags html}} {{{striptags html}}}"},
	{"date", "{{date when}} {{date name}} {{date n}}"},
	{"date layout", "{{date when \"Jan 2, 2006 15:04\"}} {{date name \"2006\"}}"},
	{"helper blocks", "{{#eq n 3}}yes{{else}}no{{/eq}}{{#gt n 5}}big{{else}}small{{/gt}}{{#and yes n}}both{{/and}}"},
	{"subexpressions", "{{#if (eq (lower \"A\") \"a\")}}ok{{/if}} {{upper (default missing first_name)}}"},
	{"helper in each", "{{#each items}}{{upper name}}{{#if (gt qty 1)}}+{{/if}} {{/each}}"},
	{"helper output escaped", "{{upper name}}|{{{upper name}}}"},
	{"hash ignored", "{{#each items foo=1}}{{name}}{{/each}}"},
}

// TestConstructsMatchReference renders each construct with this package
// and with its reference: handlebars.js for the templates that use only
// handlebars.js's own helpers, raymond (where it agrees with handlebars.js,
// see raymondAgrees) for those that call postroom's helpers, which
// handlebars.js does not have.
func TestConstructsMatchReference(t *testing.T) {
	params, globals := testParams(t)
	js := hbsjs.Start(t)
	for _, tc := range constructCases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := render(t, tc.src, HTML, params, globals)
			if err != nil {
				t.Fatalf("Append: %v", err)
			}
			if usesPostroomHelpers(t, tc.src) {
				ref := refMatch(tc.src, params, globals, got)
				if ref.err != nil || ref.panicked != nil || ref.skipped != "" {
					t.Fatalf("raymond: err %v, panic %v, skipped %q", ref.err, ref.panicked, ref.skipped)
				}
				if normEscapes(got) != normEscapes(ref.out) {
					t.Errorf("template %q\n got %q\nwant %q (raymond)", tc.src, got, ref.out)
				}
				return
			}
			ref, err := js.Render(tc.src, merged(params, globals))
			if err != nil || ref.Err != "" {
				t.Fatalf("handlebars.js: %v %s", err, ref.Err)
			}
			if got != ref.Out {
				t.Errorf("template %q\n got %q\nwant %q (handlebars.js)", tc.src, got, ref.Out)
			}
		})
	}
}

func TestTextModeDoesNotEscape(t *testing.T) {
	params, globals := testParams(t)
	for _, tc := range []struct{ name, src, want string }{
		{"double", "{{name}}", `Tom & Jerry's <b>"x"</b>`},
		{"triple", "{{{name}}}", `Tom & Jerry's <b>"x"</b>`},
		{"global", "{{company}}", "Shop & Co"},
		{"helper", "{{lower company}}", "shop & co"},
		{"each", "{{#each items}}{{name}};{{/each}}", "a<1>;b&2;c;"},
		{"map", "{{obj}}", "[object Object]"},
		{"array", "{{nums}}", "1,2.5,three,true,"},
		{"subject", "Your order #{{order.id}} is confirmed, {{first_name}}", "Your order #ORD-1 is confirmed, Zoë"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := render(t, tc.src, Text, params, globals)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestHTMLEscapesAsHandlebarsJS(t *testing.T) {
	got, err := render(t, "{{v}}", HTML, map[string]any{"v": "a&b'c<d>e\"f`g=h"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := "a&amp;b&#x27;c&lt;d&gt;e&quot;f&#x60;g&#x3D;h"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestMissing(t *testing.T) {
	params, globals := testParams(t)
	for _, tc := range []struct {
		name, src string
		want      []string
	}{
		{"none", "{{first_name}} {{company}} {{nothing}}", nil},
		{"top", "{{a}} {{b}} {{a}}", []string{"a", "b"}},
		{"nested", "{{order.id}} {{order.nope}} {{nope.id}}", []string{"order.nope", "nope.id"}},
		{"conditions and arguments do not count", "{{#if a}}{{/if}}{{#unless a}}{{/unless}}{{upper b}}", nil},
		{"blocks over an absent value count", "{{#each c}}{{/each}}{{#with d}}{{/with}}{{#e}}{{/e}}{{#each order.nope}}{{/each}}", []string{"c", "d", "e", "order.nope"}},
		{"blocks over a present value do not", "{{#each items}}{{/each}}{{#with order}}{{/with}}{{#order}}{{/order}}", nil},
		{"a block's subject once, after its mustache", "{{c}}{{#each c}}{{/each}}{{#each c}}{{/each}}", []string{"c"}},
		{"inside each", "{{#each items}}{{price}}{{/each}}", []string{"price"}},
		{"each inside each", "{{#each items}}{{#each parts}}{{/each}}{{/each}}", []string{"parts"}},
		{"triple", "{{{x}}}", []string{"x"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Compile(t.Context(), tc.src, Options{Mode: HTML})
			if err != nil {
				t.Fatal(err)
			}
			d := &Data{Params: params, Globals: globals, Missing: []string{"kept"}}
			if _, err := p.Append(t.Context(), nil, d); err != nil {
				t.Fatal(err)
			}
			want := append([]string{"kept"}, tc.want...)
			if strings.Join(d.Missing, ",") != strings.Join(want, ",") {
				t.Errorf("Missing = %q, want %q", d.Missing, want)
			}
		})
	}
}

func TestStatic(t *testing.T) {
	for _, tc := range []struct {
		name, src, want string
		static          bool
	}{
		{"text", "plain <b>text</b>", "plain <b>text</b>", true},
		{"comments", "a{{! x }}b{{!-- y --}}", "ab", true},
		{"escaped mustache", "\\{{x}}", "{{x}}", true},
		{"mustache", "a{{x}}", "", false},
		{"block", "{{#if x}}a{{/if}}", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Compile(t.Context(), tc.src, Options{Mode: HTML})
			if err != nil {
				t.Fatal(err)
			}
			got, ok := p.Static()
			if ok != tc.static || got != tc.want {
				t.Errorf("Static() = %q, %v; want %q, %v", got, ok, tc.want, tc.static)
			}
			out, err := p.Append(t.Context(), []byte("pre:"), nil)
			if err != nil {
				t.Fatal(err)
			}
			if ok && string(out) != "pre:"+tc.want {
				t.Errorf("Append = %q, want %q", out, "pre:"+tc.want)
			}
		})
	}
}

func TestCompileErrors(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		opts      Options
		line, col int
	}{
		{"unclosed block", "a\n{{#if x}}", Options{Mode: HTML}, 2, 1},
		{"unclosed block later on the line", "a {{#each x}}{{#if y}}b{{/if}}", Options{Mode: HTML}, 1, 3},
		{"decorator block", "a\n {{#*deco}}y{{/deco}}", Options{Mode: HTML}, 2, 2},
		{"dynamic partial", "{{> (which)}}", Options{Mode: HTML}, 1, 5},
		{"subexpression without arguments", "{{#if (name)}}x{{/if}}", Options{Mode: HTML}, 1, 8},
		{"block params on if", "{{#if a as |b|}}x{{/if}}", Options{Mode: HTML}, 1, 1},
		{"NUL byte", "a\n b\x00", Options{Mode: HTML}, 2, 3},
		{"carriage return in a name", "{{x\r}}", Options{Mode: HTML}, 1, 4},
		{"no-break space in a name", "{{x\u00a0}}", Options{Mode: HTML}, 1, 4},
		{"character after a name", "{{#each@x}}{{/each}}", Options{Mode: HTML}, 1, 8},
		{"escape before a mustache", "\\{{{{x}}", Options{Mode: HTML}, 1, 1},
		{"number with a plus", "{{lookup a +1}}", Options{Mode: HTML}, 1, 12},
		{"nested raw block", "{{{{raw}}}}{{{{{/raw}}}}", Options{Mode: HTML}, 1, 12},
		{"data variable named like a helper", "{{@if}}", Options{Mode: HTML}, 1, 4},
		{"else glued to a name", "{{#if a}}{{else0}}{{/if}}", Options{Mode: HTML}, 1, 16},
		{"unclosed mustache", "{{x", Options{Mode: HTML}, 1, 4},
		{"mismatched close", "{{#if x}}a{{/each}}", Options{Mode: HTML}, 1, 11},
		{"stray close", "a\nb{{/if}}", Options{Mode: HTML}, 2, 2},
		{"partial with two arguments", "x\n  {{> footer a b}}", Options{Mode: HTML}, 2, 3},
		{"unknown helper", "{{shout name}}", Options{Mode: HTML}, 1, 3},
		{"unknown helper hash", "{{shout a=1}}", Options{Mode: HTML}, 1, 3},
		{"unknown block helper", "{{#shout name}}x{{/shout}}", Options{Mode: HTML}, 1, 4},
		{"unknown subexpression", "{{upper (shout name)}}", Options{Mode: HTML}, 1, 10},
		{"path with args", "{{a.b c}}", Options{Mode: HTML}, 1, 3},
		{"equal three args", "{{#equal A A A}}x{{/equal}}", Options{Mode: HTML}, 1, 4},
		{"equal as mustache", "{{equal A A}}", Options{Mode: HTML}, 1, 3},
		{"if as mustache", "{{#each x}}{{if y}}{{/each}}", Options{Mode: HTML}, 1, 14},
		{"if as subexpression", "{{upper (if y)}}", Options{Mode: HTML}, 1, 10},
		{"each without args", "{{#each}}x{{/each}}", Options{Mode: HTML}, 1, 4},
		{"nameless data variable", "{{@.}}", Options{Mode: HTML}, 1, 4},
		{"nameless data variable as argument", "{{upper @this}}", Options{Mode: HTML}, 1, 10},
		{"if two args", "{{#if a b}}x{{/if}}", Options{Mode: HTML}, 1, 4},
		{"lookup one arg", "{{lookup obj}}", Options{Mode: HTML}, 1, 3},
		{"lookup three args", "{{lookup a b c}}", Options{Mode: HTML}, 1, 3},
		{"lookup block", "{{#lookup a b}}x{{/lookup}}", Options{Mode: HTML}, 1, 4},
		{"builtin helper name alone", "{{lookup}}", Options{Mode: HTML}, 1, 3},
		{"date three args", "{{date a b c}}", Options{Mode: HTML}, 1, 3},
		{"too large", "{{x}}{{y}}", Options{Mode: HTML, MaxSourceBytes: 9}, 0, 0},
		{"too deep", "{{#if a}}{{#if b}}{{#if c}}x{{/if}}{{/if}}{{/if}}", Options{Mode: HTML, MaxDepth: 2}, 1, 19},
		{"too deep subexpressions", "{{upper (lower (upper x))}}", Options{Mode: HTML, MaxDepth: 1}, 1, 16},
		{"no mode", "x", Options{}, 0, 0},
		{"bad mode", "x", Options{Mode: 9}, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Compile(t.Context(), tc.src, tc.opts)
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("Compile(%q) = %v, %v; want an *Error", tc.src, p, err)
			}
			if ce.Line != tc.line || ce.Column != tc.col {
				t.Errorf("position %d:%d, want %d:%d (%v)", ce.Line, ce.Column, tc.line, tc.col, ce)
			}
		})
	}
}
