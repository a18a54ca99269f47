package program

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"
)

// TestHandlebarsJSSemantics pins, without node, what handlebars.js 4.7
// renders for each difference raymond had (issue: "silent differences"),
// and the deliberate differences: integers print exactly as given.
// TestHandlebarsJS checks the same against handlebars.js itself.
func TestHandlebarsJSSemantics(t *testing.T) {
	var order map[string]any
	if err := json.Unmarshal([]byte(`{"discount": 10, "items": [{"name": "a", "discount": 5}, {"name": "b"}]}`), &order); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, src string
		params    map[string]any
		want      string
	}{
		{"no lookup in parent contexts", "{{#each items}}{{name}}{{#if discount}} (-{{discount}}%){{/if}};{{/each}}", order, "a (-5%);b;"},
		{"explicit parent", "{{#each items}}{{name}}{{../discount}};{{/each}}", order, "a10;b10;"},
		{"empty object is true", "{{#if o}}yes{{else}}no{{/if}}", map[string]any{"o": map[string]any{}}, "yes"},
		{"empty array is false", "{{#if a}}yes{{else}}no{{/if}}", map[string]any{"a": []any{}}, "no"},
		{"includeZero", "{{#if z includeZero=true}}zero{{else}}none{{/if}}{{#unless z includeZero=true}}u{{/unless}}", map[string]any{"z": 0.0}, "zero"},
		{"includeZero json.Number", "{{#if z includeZero=true}}zero{{/if}}{{#if z}}no{{/if}}", map[string]any{"z": json.Number("0")}, "zero"},
		{"lookup returns a value", `{{lookup (lookup strings locale) "footer"}}|{{#with (lookup strings locale)}}{{hello}}{{/with}}`,
			map[string]any{"locale": "fr", "strings": map[string]any{"fr": map[string]any{"footer": "Au revoir", "hello": "Bonjour"}}}, "Au revoir|Bonjour"},
		{"numbers print like JavaScript", "{{a}} {{b}} {{c}} {{d}} {{e}} {{f}}", map[string]any{"a": 1e-7, "b": 1e21, "c": math.Copysign(0, -1), "d": 1e-6, "e": 2.5e-10, "f": 123.0}, "1e-7 1e+21 0 0.000001 2.5e-10 123"},
		{"arrays join with commas", "{{a}}|{{n}}", map[string]any{"a": []any{"a", "b", "c"}, "n": []any{1.0, []any{2.0, nil}, true}}, "a,b,c|1,2,,true"},
		{"objects print as JavaScript", "{{o}}", map[string]any{"o": map[string]any{"city": "Paris"}}, "[object Object]"},
		{"integer-like keys in numeric order", "{{#each o}}{{@key}},{{/each}}", map[string]any{"o": map[string]any{"1": 1, "5": 1, "10": 1, "100": 1, "b": 1, "a": 1, "01": 1}}, "1,5,10,100,01,a,b,"},
		{"integers exactly as given", "{{id}} {{big}} {{i}} {{u}} {{neg0}} {{f}}", map[string]any{"id": json.Number("9007199254740993"), "big": json.Number("123456789012345678901234567890"), "i": int64(math.MaxInt64), "u": uint64(math.MaxUint64), "neg0": json.Number("-0"), "f": json.Number("2.50")}, "9007199254740993 123456789012345678901234567890 9223372036854775807 18446744073709551615 0 2.5"},
		{"own helper names alone are params", "{{title}} {{url}} {{date}} {{length}} {{default}} {{upper}}", map[string]any{"title": "Dr", "url": "u", "date": "d", "length": 3.0, "default": "x", "upper": "U"}, "Dr u d 3 x U"},
		{"own helper name as a section", "{{#title}}[{{.}}]{{/title}}", map[string]any{"title": "Ms"}, "[Ms]"},
		{"own helpers with arguments", "{{upper title}}", map[string]any{"title": "ms"}, "MS"},
		{"log with several arguments", `{{log "a" x level="warn"}}ok`, map[string]any{"x": 1.0}, "ok"},
		{"data variables do not fall back", "[{{@first}}][{{@index}}]", map[string]any{"first": "F", "index": 1.0}, "[][]"},
		{"array key is the index", "{{#each a}}{{@key}}{{/each}}", map[string]any{"a": []any{"x", "y"}}, "01"},
		{"array and string length", "{{a.length}} {{s.length}} {{s.[1]}}", map[string]any{"a": []any{1, 2}, "s": "héllo"}, "2 5 é"},
		{"non-canonical index", "[{{a.[01]}}][{{a.[1]}}]", map[string]any{"a": []any{"x", "y"}}, "[][y]"},
		{"section over zero and empty string", "{{#z}}z{{/z}}{{#s}}s{{/s}}{{^z}}nz{{/z}}", map[string]any{"z": 0.0, "s": ""}, "zs"},
		{"each over a string is the inverse", "{{#each s}}x{{else}}none{{/each}}", map[string]any{"s": "abc"}, "none"},
		{"with zero renders", "{{#with z}}[{{this}}]{{/with}}", map[string]any{"z": 0.0}, "[0]"},
		{"null element is its own context", "{{#each a}}[{{name}}]{{/each}}", map[string]any{"name": "root", "a": []any{nil}}, "[]"},
		{"same context does not deepen", "{{#with a}}{{#with ../a}}{{../x}}{{/with}}{{/with}}", map[string]any{"a": map[string]any{"x": "inner"}, "x": "root"}, "root"},
		{"block param bound to nothing", "{{#each a as |v k extra|}}{{extra}}{{/each}}", map[string]any{"a": []any{1.0}, "extra": "root"}, ""},
		{"empty literal names the context", `{{#with o}}{{""}}{{/with}}|{{#each a}}{{""}}{{/each}}`, map[string]any{"o": map[string]any{}, "a": []any{"x", 1.0}}, "[object Object]|x1"},
		{"a string == its array keeps the depth", "{{#each items}}{{#each this}}{{../a}}{{/each}}{{/each}}", map[string]any{"a": "root", "items": []any{[]any{"x"}, []any{1.0}, []any{"y", "z"}}}, "rootroot"},
		{"a block in a null context gets an empty object", "{{#each a}}[{{#if true}}{{.}}{{/if}}|{{#each missing}}{{else}}{{this}}{{/each}}|{{.}}]{{/each}}", map[string]any{"a": []any{nil}}, "[[object Object]|[object Object]|]"},
		{"escapes", "{{s}}", map[string]any{"s": "<'`=\"&>"}, "&lt;&#x27;&#x60;&#x3D;&quot;&amp;&gt;"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := render(t, tc.src, HTML, tc.params, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("%s\n got %q\nwant %q", tc.src, got, tc.want)
			}
		})
	}
}

// TestTextModeNeverEscapes: the escapes handlebars.js adds in HTML are
// absent from Text mode, including for values of helpers.
func TestTextModeNeverEscapes(t *testing.T) {
	got, err := render(t, "{{s}} {{{s}}} {{lower s}} {{a}}", Text, map[string]any{"s": "<'`=\"&>", "a": []any{"<", ">"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := "<'`=\"&> <'`=\"&> <'`=\"&> <,>"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestLogSeveralArguments: {{log}} passes every argument, in order, to
// Options.Log (raymond took one).
func TestLogSeveralArguments(t *testing.T) {
	var got [][]any
	p, err := Compile(t.Context(), `{{log "order" id level="warn"}}{{log id}}`, Options{Mode: HTML, Log: func(args []any) {
		got = append(got, append([]any(nil), args...))
	}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := p.Append(t.Context(), nil, &Data{Params: map[string]any{"id": json.Number("42")}})
	if err != nil || len(out) != 0 {
		t.Fatalf("Append = %q, %v", out, err)
	}
	want := [][]any{{"order", json.Number("42")}, {json.Number("42")}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Log got %v, want %v", got, want)
	}
}
