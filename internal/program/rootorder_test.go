package program

import (
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/postroom/postroom/internal/testkit/hbsjs"
)

// rootTemplates iterate the root context every way there is: each over
// this at the top and over @root (also from inside a block), a partial's
// hash over the root, and a partial that iterates its context.
var rootTemplates = []string{
	"{{#each this}}{{@key}}={{this}};{{/each}}",
	"{{#each @root as |v k|}}{{k}}:{{v}},{{@index}}{{#if @last}}.{{/if}}{{/each}}",
	"{{#with o}}{{#each @root}}{{@key}};{{/each}}{{/with}}",
	"{{> keys z=9 a=8}}",
	"{{> keys}}",
}

var rootPartials = map[string]string{"keys": "{{#each this}}{{@key}}={{this}};{{/each}}"}

// renderRoot renders src with this package, params and globals decoded
// from JSON as DecodeCall decodes them (maps with their keys' order).
func renderRoot(t *testing.T, src string, globals, params []byte) string {
	t.Helper()
	var partials Partials
	for name, ps := range rootPartials {
		pp, err := Compile(t.Context(), ps, Options{Mode: HTML})
		if err != nil {
			t.Fatal(err)
		}
		partials.Add(name, pp)
	}
	p, err := Compile(t.Context(), src, Options{Mode: HTML})
	if err != nil {
		t.Fatal(err)
	}
	d := &Data{Partials: &partials}
	if d.Globals, d.GlobalsOrder, err = DecodeMapKeys(globals); err != nil {
		t.Fatal(err)
	}
	if d.Params, d.ParamsOrder, err = DecodeMapKeys(params); err != nil {
		t.Fatal(err)
	}
	out, err := p.Append(t.Context(), nil, d)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// TestRootOrderHandlebarsJS compares {{#each}} over the root context with
// handlebars.js's over Object.assign({}, globals, params), for params and
// globals whose keys interleave, override each other and include
// integer-like keys ("01" and "-1" are not), given as written and then
// drawn at random from a pool of keys in random orders.
func TestRootOrderHandlebarsJS(t *testing.T) {
	js := hbsjs.Start(t)
	type pair struct{ globals, params string }
	cases := []pair{
		{`{"zeta":1,"alpha":2,"1":3}`, `null`},
		{`null`, `{"zeta":1,"alpha":2,"10":3,"2":4}`},
		{`{"m":"g","b":"g","2":"g","a":"g"}`, `{"a":"p","z":"p","b":"p","1":"p","01":"p","-1":"p"}`},
		{`{"o":{"y":1,"x":2},"b":1}`, `{"b":2,"o":{"k":1},"a":3}`},
		{`{}`, `{}`},
		{`{"a":1,"a":2,"c":3,"b":4}`, `{"c":null,"d":5,"4294967294":1,"4294967295":2}`},
	}
	r := rand.New(rand.NewPCG(1, 2))
	pool := []string{"a", "b", "m", "z", "name", "o", "0", "1", "2", "10", "01", "-1", "x y", "é"}
	object := func(tag string) string {
		keys := slices.Clone(pool)
		r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
		keys = keys[:r.IntN(len(keys)+1)]
		var b strings.Builder
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			kb, _ := json.Marshal(k)
			b.Write(kb)
			b.WriteString(`:"` + tag + strconv.Itoa(i) + `"`)
		}
		b.WriteByte('}')
		return b.String()
	}
	for range 100 {
		cases = append(cases, pair{object("g"), object("p")})
	}
	for i, c := range cases {
		for _, src := range rootTemplates {
			ref, err := js.RenderMerged(src, rootPartials, json.RawMessage(c.globals), json.RawMessage(c.params))
			if err != nil {
				t.Fatal(err)
			}
			if ref.Err != "" {
				t.Fatalf("handlebars.js: %s", ref.Err)
			}
			if got := renderRoot(t, src, []byte(c.globals), []byte(c.params)); got != ref.Out {
				t.Errorf("case %d: %s\nglobals %s\nparams  %s\n got %q\nwant %q (handlebars.js)", i, src, c.globals, c.params, got, ref.Out)
			}
		}
	}
}

// TestRootOrderChanged checks the root's order after the maps were
// changed past their decoding: the keys of an order still present keep
// it, a deleted key is skipped, the keys added come after, sorted
// (integer-like first, as always), and an order that names a key twice or
// one of no map visits each key once.
func TestRootOrderChanged(t *testing.T) {
	p, err := Compile(t.Context(), "{{#each this}}{{@key}};{{/each}}", Options{Mode: HTML})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		d    Data
		want string
	}{
		{"as decoded", Data{
			Params: map[string]any{"z": 1, "a": 1}, ParamsOrder: []string{"z", "a"},
			Globals: map[string]any{"y": 1, "b": 1}, GlobalsOrder: []string{"y", "b"},
		}, "y;b;z;a;"},
		{"deleted and added", Data{
			Params: map[string]any{"z": 1, "c": 1, "b": 1, "3": 1}, ParamsOrder: []string{"z", "gone", "a"},
			Globals: map[string]any{"y": 1}, GlobalsOrder: []string{"x", "y"},
		}, "3;y;z;b;c;"},
		{"an order repeating a key", Data{
			Params: map[string]any{"a": 1, "b": 1}, ParamsOrder: []string{"a", "a"},
		}, "a;b;"},
		{"a key of both", Data{
			Params: map[string]any{"b": 1, "a": 1}, ParamsOrder: []string{"b", "a"},
			Globals: map[string]any{"a": 1, "c": 1}, GlobalsOrder: []string{"c", "a"},
		}, "c;a;b;"},
		{"only globals ordered", Data{
			Params:  map[string]any{"n": 1, "b": 1},
			Globals: map[string]any{"z": 1, "a": 1}, GlobalsOrder: []string{"z", "a"},
		}, "z;a;b;n;"},
		{"no order: sorted as one map", Data{
			Params:  map[string]any{"n": 1, "b": 1, "7": 1},
			Globals: map[string]any{"z": 1, "a": 1, "b": 1},
		}, "7;a;b;n;z;"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := p.Append(t.Context(), nil, &tc.d)
			if err != nil {
				t.Fatal(err)
			}
			if string(out) != tc.want {
				t.Errorf("got %q, want %q", out, tc.want)
			}
		})
	}
}
