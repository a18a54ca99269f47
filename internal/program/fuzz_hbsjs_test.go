package program

import (
	"encoding/json"
	"errors"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/aymerick/raymond/ast"
	"github.com/aymerick/raymond/parser"

	"github.com/postroom/postroom/internal/testkit/hbsjs"
)

// jsFragments are the pieces FuzzHandlebarsJS assembles templates from:
// handlebars.js's own constructs only (postroom's helpers are not
// handlebars.js's), with the contexts, data variables and values where
// raymond and handlebars.js differ.
var jsFragments = []string{
	"{{a}}", "{{{b}}}", "{{x.y}}", "{{this}}", "{{.}}", "{{../a}}", "{{../../name}}", "{{@root.a}}",
	"{{@index}}", "{{@key}}", "{{@first}}", "{{@last}}", "{{@../index}}", "{{@../key}}", "{{name}}",
	"{{#if a}}", "{{#if x includeZero=true}}", "{{#unless b}}", "{{#each items}}", "{{#each obj as |v k|}}",
	"{{#each this}}", "{{#with obj}}", "{{#with items as |it|}}", "{{#with ../a}}", "{{#items}}", "{{^a}}", "{{#n}}",
	"{{else}}", "{{^}}", "{{else if b}}",
	"{{/if}}", "{{/unless}}", "{{/each}}", "{{/with}}", "{{/items}}", "{{/a}}", "{{/n}}",
	`{{lookup obj "a"}}`, "{{lookup items 0}}", "{{lookup ../obj @key}}", "{{lookup . @index}}",
	`{{#with (lookup obj "x")}}`, `{{#each (lookup . "items")}}`, "{{log a b}}",
	"{{v}}", "{{k}}", "{{it.name}}", "{{v.y}}", "{{items.length}}", "{{name.length}}", "{{items.[0]}}",
	"<p>", " ", "\n", "&", "{{!c}}", "{{~a~}}", `{{"name"}}`, "{{[x]}}", "{{items.[0].name}}",
	"{{obj.x.y}}", "{{n}}", "{{y}}", "{{obj}}", "{{items}}", "{{obj.a.length}}", "{{{{raw}}}}{{x}}{{{{/raw}}}}",
	"{{log}}", "{{> wrap}}", "{{#> wrap}}", "{{/wrap}}", "{{> keys}}", "{{> keys obj}}", "{{> keys obj z=1 a=2}}",
	"{{> keys b=1 a=n}}", "{{#> keys}}", "{{/keys}}", "{{#if @partial-block}}", "{{#unless @partial-block}}",
	"{{#with @partial-block}}", "{{> @partial-block}}",
}

// jsPartials are the partials FuzzHandlebarsJS's templates may call: one
// that wraps its block when there is one (GH-1341), one that lists its
// context's keys.
var jsPartials = map[string]string{
	"wrap": "{{#if @partial-block}}<div>{{> @partial-block}}</div>{{else}}none{{/if}}{{#unless @partial-block}}!{{/unless}}",
	"keys": "{{#each this}}{{@key}}={{this}};{{/each}}{{#with @partial-block}}({{this}}){{/with}}",
}

func assembleJS(src string, pick []byte) string {
	var b strings.Builder
	b.WriteString(src)
	for _, c := range pick {
		b.WriteString(jsFragments[int(c)%len(jsFragments)])
	}
	return b.String()
}

// FuzzHandlebarsJS renders random templates (the src argument followed by
// the fragments picked) with random parameters both with this package
// (HTML mode) and with handlebars.js 4.7 through one long-lived node
// process, and requires the same output (CRLF normalised), or an error
// from both, with the partials of jsPartials. Templates Compile refuses, templates that call postroom's own
// helpers (handlebars.js has none of them) and renders that reach this
// package's limits are not compared. The parameters are Params over
// Globals here (for odd seeds with numbers as json.Number, as DecodeCall
// gives them) and their merge (JSON, keys sorted) in handlebars.js, so
// that the documented difference (integers beyond 2^53) does not arise;
// for seeds with bit 2 set, the top levels have an order (Data.ParamsOrder,
// Data.GlobalsOrder) and handlebars.js gets Object.assign({}, globals,
// params) of them in that order. For seeds with bit 1 set the nested objects are
// *Object values in a shuffled order (MarshalJSON gives handlebars.js
// the same order), so that key order is compared too.
func FuzzHandlebarsJS(f *testing.F) {
	js := hbsjs.Start(f)
	fuzzSeeds(f)
	// What fuzzing found, fixed or refused since.
	for _, src := range []string{"{{@if}}", `{{#0}}{{/"0"}}`, "{{[]}}{{items.length}}", "{{{{yes}}}}{{{{{/yes}}}}", `0{{#each this}}{{#each (lookup . "items")}}{{else}}{{.}}{{/each}}{{/each}}`, `0{{#each (lookup . "items")}}{{#each this}}{{../a}}{{/each}}{{/each}}`, "0{{#unless b}}{{{b}}}{{#unless b}}{{{b}}}{{/unless}}{{/unless}}", `{{""}}{{items.length}}`, "0\n{{!c}}\n {{!c}}", "{{#if 1}}{{else0}}0{{/if}}", "{{!{{items.length}}{{{b}}}{{{b}}}", "{{!c}} {{items.length}}", "\v{{~a~}}", "{{x\r}}", "{{#each@A}}{{/each}}", "\\{{{{items.length}}", "{{+00}}", "\x00"} {
		f.Add(src, []byte(nil), uint64(0))
	}
	var partials Partials
	for name, src := range jsPartials {
		p, err := Compile(f.Context(), src, Options{Mode: HTML})
		if err != nil {
			f.Fatal(err)
		}
		partials.Add(name, p)
	}
	f.Fuzz(func(t *testing.T, src string, pick []byte, seed uint64) {
		if len(src) > 2048 || len(pick) > 48 {
			return
		}
		tmpl := assembleJS(src, pick)
		if !utf8.ValidString(tmpl) {
			return // JSON, to node and in a call, carries valid UTF-8 only
		}
		p, err := Compile(t.Context(), tmpl, Options{Mode: HTML, MaxDepth: 50, MaxSteps: 20_000, MaxOutputBytes: 1 << 16})
		if err != nil {
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("Compile error %T %v, want *Error", err, err)
			}
			return
		}
		parse := parser.Parse
		if strings.Contains(tmpl, "#>") {
			// raymond's lexer has no partial blocks: this package's
			// parser, its port, reads them as handlebars.js does.
			parse = func(src string) (*ast.Program, error) { return parseTokens(lex(src, lexExtended)) }
		}
		if tree, err := parse(tmpl); err != nil {
			t.Fatalf("Compile accepted %q, raymond's parser refuses it: %v", tmpl, err)
		} else if callsPostroomHelper(tree) {
			return
		}
		if rawValuesFirst(p.body) {
			return // a documented difference: handlebars.js adds them with +
		}
		params, globals := genParams(seed)
		if seed&2 == 2 {
			// Nested objects as decoding gives them: *Object, here with
			// their keys in an order of the seed's, which both sides see.
			r := rand.New(rand.NewPCG(seed, 7))
			params, globals = shuffled(r, params).(map[string]any), shuffled(r, globals).(map[string]any)
		}
		ours := &Data{Params: params, Globals: globals, Partials: &partials}
		if seed&1 == 1 { // numbers as DecodeCall gives them: json.Number
			ours = &Data{Params: useNumber(t, params), Globals: useNumber(t, globals), Partials: &partials}
		}
		var globalsJSON, paramsJSON json.RawMessage
		if seed&4 == 4 {
			// The top levels in an order of the seed's, as decoding
			// records it, and the merge handlebars.js gets that order too.
			r := rand.New(rand.NewPCG(seed, 11))
			ours.GlobalsOrder, globalsJSON = orderedJSON(t, r, globals)
			ours.ParamsOrder, paramsJSON = orderedJSON(t, r, params)
		}
		got, err := p.Append(t.Context(), nil, ours)
		if errors.Is(err, ErrTooManySteps) || errors.Is(err, ErrOutputTooLarge) {
			return
		}
		var ref hbsjs.Result
		var jsErr error
		if seed&4 == 4 {
			ref, jsErr = js.RenderMerged(tmpl, jsPartials, globalsJSON, paramsJSON)
		} else {
			ref, jsErr = js.RenderPartials(tmpl, jsPartials, merged(params, globals))
		}
		if jsErr != nil {
			t.Fatal(jsErr)
		}
		switch {
		case (err != nil) != (ref.Err != ""):
			t.Fatalf("template %q\nparams %v\nglobals %v\nours: %q, %v\nhandlebars.js: %q, error %q", tmpl, params, globals, got, err, ref.Out, ref.Err)
		case err == nil && normCRLF(string(got)) != normCRLF(ref.Out):
			t.Fatalf("template %q\nparams %v\nglobals %v\n got %q\nwant %q (handlebars.js)", tmpl, params, globals, got, ref.Out)
		}
	})
}

// orderedJSON returns the keys of m in an order drawn from r and m as a
// JSON object with its keys in that order.
func orderedJSON(t *testing.T, r *rand.Rand, m map[string]any) ([]string, json.RawMessage) {
	t.Helper()
	keys := slices.Sorted(maps.Keys(m))
	r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	b := []byte{'{'}
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		kb, err := json.Marshal(k)
		if err != nil {
			t.Fatal(err)
		}
		vb, err := json.Marshal(m[k])
		if err != nil {
			t.Fatal(err)
		}
		b = append(append(append(b, kb...), ':'), vb...)
	}
	return keys, append(b, '}')
}

// shuffled returns v with the maps below the top level turned into
// *Object values whose keys are in an order drawn from r (the top level,
// the root, stays a map: Data.Params is one).
func shuffled(r *rand.Rand, v any) any {
	return shuffle(r, v, true)
}

func shuffle(r *rand.Rand, v any, top bool) any {
	switch x := v.(type) {
	case map[string]any:
		keys := slices.Sorted(maps.Keys(x))
		r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
		if top {
			m := make(map[string]any, len(x))
			for _, k := range keys {
				m[k] = shuffle(r, x[k], false)
			}
			return m
		}
		var b objectBuilder
		for _, k := range keys {
			b.set(k, shuffle(r, x[k], false))
		}
		return b.object()
	case []any:
		a := make([]any, len(x))
		for i, e := range x {
			a[i] = shuffle(r, e, false)
		}
		return a
	}
	return v
}

// useNumber returns m after a JSON round trip that decodes numbers as
// json.Number.
func useNumber(t *testing.T, m map[string]any) map[string]any {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	v, _, err := decodeData(b)
	if err != nil {
		t.Fatal(err)
	}
	return v.(map[string]any)
}

// rawValuesFirst reports whether a program, or a block's, starts with a
// raw mustache followed by another or by a block ({{{a}}}{{{b}}},
// {{{a}}}{{#if x}}{{{b}}}{{/if}}): handlebars.js's compiled code joins
// them with JavaScript's +, and a block whose output is one raw mustache
// returns its value unconverted, so that two numbers or booleans add up
// (3 and 3 print 6, false and false 0), a documented difference.
func rawValuesFirst(p *prog) bool {
	if p == nil {
		return false
	}
	if len(p.ops) > 1 && p.ops[0].kind == opValue && !p.ops[0].esc &&
		(p.ops[1].kind == opBlock || p.ops[1].kind == opValue && !p.ops[1].esc) {
		return true
	}
	for _, o := range p.ops {
		if o.kind == opBlock && (rawValuesFirst(o.blk.body) || rawValuesFirst(o.blk.inverse)) {
			return true
		}
	}
	return false
}
