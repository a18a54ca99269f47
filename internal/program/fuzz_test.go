package program

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/aymerick/raymond/parser"
)

// fragments are the pieces FuzzDifferential assembles templates from: one
// per byte of its pick argument. Openers and closers come separately, so
// most assemblies are unbalanced and refused; the rest exercise nesting.
var fragments = []string{
	"{{a}}", "{{{b}}}", "{{x.y}}", "{{this}}", "{{.}}", "{{../a}}", "{{@root.a}}",
	"{{@index}}", "{{@key}}", "{{@first}}", "{{@last}}", "{{@../index}}", "{{name}}",
	"{{#if a}}", "{{#if x includeZero=true}}", "{{#unless b}}", "{{#each items}}",
	"{{#each obj as |v k|}}", "{{#each this}}", "{{#with obj}}", "{{#with items as |it|}}",
	"{{#items}}", "{{^a}}", "{{#equal a b}}", "{{#eq a 1}}", "{{#and a b}}",
	"{{else}}", "{{^}}", "{{else if b}}",
	"{{/if}}", "{{/unless}}", "{{/each}}", "{{/with}}", "{{/items}}", "{{/a}}", "{{/equal}}", "{{/eq}}", "{{/and}}",
	"{{lookup obj \"a\"}}", "{{lookup items 0}}", "{{lookup ../obj @key}}", "{{upper name}}",
	"{{lower (default a \"D\")}}", "{{title name}}", "{{eq a b}}", "{{ne a 2}}", "{{gt n 1}}",
	"{{lt n \"5\"}}", "{{and a b}}", "{{or a b}}", "{{not a}}", "{{length items}}", "{{url name}}",
	"{{striptags name}}", "{{date a}}", "{{log a}}", "{{v}}", "{{k}}", "{{it.name}}", "{{v.y}}",
	"<p>", " ", "\n", "&", "{{!c}}", "{{~a~}}", "{{\"name\"}}", "{{[x]}}", "{{items.[0].name}}",
	"{{obj.x.y}}", "{{n}}", "{{#if (gt n 0)}}", "{{#each (lookup obj \"x\")}}",
}

// names are the keys of generated parameters: few, so that templates hit
// them often, and so that the root holds at most 8 keys (see refMatch).
var (
	paramNames  = []string{"a", "b", "n", "x", "name", "items"}
	globalNames = []string{"a", "obj", "y"}
	strValues   = []string{"", "0", "3", "2.5", "Tom & Jerry", "<b>'q'</b>", "Zoë", "a b", "2024-03-05T10:20:30Z", "true"}
	keyNames    = []string{"a", "b", "x", "y", "name"}
)

// genValue returns a random value of the kinds encoding/json produces.
// Maps hold at most 3 keys: raymond visits them in Go's random order and
// refMatch relies on the sorted order being a likely one.
func genValue(r *rand.Rand, depth int) any {
	k := r.IntN(9)
	if depth >= 3 && k >= 7 {
		k = r.IntN(7)
	}
	switch k {
	case 0:
		return nil
	case 1:
		return r.IntN(2) == 0
	case 2:
		return float64(r.IntN(7) - 2)
	case 3:
		return []float64{0.5, -1.25, 1e21, 3}[r.IntN(4)]
	case 4, 5, 6:
		return strValues[r.IntN(len(strValues))]
	case 7:
		s := make([]any, r.IntN(4))
		for i := range s {
			s[i] = genValue(r, depth+1)
		}
		return s
	default:
		m := map[string]any{}
		for range r.IntN(4) {
			m[keyNames[r.IntN(len(keyNames))]] = genValue(r, depth+1)
		}
		return m
	}
}

func genParams(seed uint64) (params, globals map[string]any) {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	params, globals = map[string]any{}, map[string]any{}
	for _, n := range paramNames {
		if r.IntN(3) > 0 {
			params[n] = genValue(r, 0)
		}
	}
	for _, n := range globalNames {
		if r.IntN(2) > 0 {
			globals[n] = genValue(r, 0)
		}
	}
	return params, globals
}

func assemble(src string, pick []byte) string {
	var b strings.Builder
	b.WriteString(src)
	for _, c := range pick {
		b.WriteString(fragments[int(c)%len(fragments)])
	}
	return b.String()
}

func fuzzSeeds(f *testing.F) {
	f.Helper()
	for _, tc := range constructCases {
		f.Add(tc.src, []byte(nil), uint64(len(tc.src)))
	}
	if w, err := os.ReadFile(workloadPath); err == nil {
		f.Add(string(w[:0]), []byte{13, 12, 26, 0, 29, 16, 12, 58, 31}, uint64(1))
		wl := loadWorkload(f)
		f.Add(wl.Message.HTML, []byte(nil), uint64(2))
		f.Add(wl.Message.Subject, []byte(nil), uint64(3))
	}
	for i, pick := range [][]byte{
		{13, 0, 26, 1, 29},     // if else
		{16, 12, 7, 9, 10, 31}, // each with data
		{17, 56, 57, 59, 31},   // each block params
		{18, 8, 3, 31},         // each this
		{19, 2, 71, 32},        // with
		{20, 58, 33},           // with block param
		{21, 12, 5, 34},        // section
		{22, 0, 35},            // inverse section
		{23, 0, 36}, {24, 0, 26, 1, 37}, {25, 12, 38},
		{13, 28, 0, 26, 1, 29},      // else if
		{16, 40, 16, 11, 7, 31, 31}, // nested each with @../index
		{73, 0, 29}, {74, 3, 31},
	} {
		f.Add("", pick, uint64(i))
	}
}

// FuzzDifferential checks this package against raymond where raymond is
// still a reference. For random templates (the src argument followed by
// the fragments picked), a template Compile accepts must parse with
// raymond's parser. Where raymond and handlebars.js agree (raymondAgrees:
// no blocks, parent or data paths, lookup or this, and scalar parameters)
// it renders the template with random parameters both with this package
// (HTML mode) and with raymond carrying the same helpers, and requires the
// same output up to the spelling of escapes (normEscapes), or an error
// from both. Renders that reach this package's limits are not compared
// (raymond has none). FuzzHandlebarsJS compares everything else with
// handlebars.js.
//
// Map order: raymond's each over a map follows Go's random map order while
// this package sorts keys. Generated maps hold at most 3 keys and the root
// at most 8, and refMatch feeds raymond maps built in sorted insertion
// order, whose iteration in Go is a rotation of the slots that yields the
// sorted order more than half of the time; it renders again (up to
// refAttempts times) until raymond's output equals ours. An output that
// differs by more than key order never matches and fails the test.
func FuzzDifferential(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, src string, pick []byte, seed uint64) {
		if len(src) > 4096 || len(pick) > 64 {
			return
		}
		tmpl := assemble(src, pick)
		p, err := Compile(t.Context(), tmpl, Options{Mode: HTML, MaxDepth: 50})
		if err != nil {
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("Compile error %T %v, want *Error", err, err)
			}
			return
		}
		if _, err := parser.Parse(tmpl); err != nil {
			t.Fatalf("Compile accepted %q, raymond's parser refuses it: %v", tmpl, err)
		}
		params, globals := genParams(seed)
		if !raymondAgrees(tmpl, params, globals) {
			return
		}
		lim, err := Compile(t.Context(), tmpl, Options{Mode: HTML, MaxSteps: 20_000, MaxOutputBytes: 1 << 16})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := lim.Append(t.Context(), nil, &Data{Params: params, Globals: globals}); errors.Is(err, ErrTooManySteps) || errors.Is(err, ErrOutputTooLarge) {
			return // too big to compare with an unbounded raymond render
		}
		got, err := p.Append(t.Context(), nil, &Data{Params: params, Globals: globals})
		ref := refMatch(tmpl, params, globals, string(got))
		switch {
		case ref.skipped != "":
			return
		case ref.panicked != nil:
			if documentedRaymondPanic(ref.panicked) && err == nil {
				return
			}
			t.Fatalf("raymond panicked on accepted template %q (params %v, globals %v): %v; ours: %q, %v", tmpl, params, globals, ref.panicked, got, err)
		case ref.err != nil || err != nil:
			var re *RenderError
			if ref.err == nil || !errors.As(err, &re) {
				t.Fatalf("template %q (params %v, globals %v): raymond error %v, ours %v", tmpl, params, globals, ref.err, err)
			}
		case normEscapes(string(got)) != normEscapes(ref.out):
			t.Fatalf("template %q\nparams %v\nglobals %v\n got %q\nwant %q (raymond)", tmpl, params, globals, got, ref.out)
		}
	})
}

// raymondAgrees reports whether raymond renders tmpl as handlebars.js
// does with these parameters, as far as this package is concerned: no
// block, else, parent path (../), data variable (@x), lookup, this or
// empty segment ({{[]}}: the context in handlebars.js), whose meanings
// differ (see the package documentation), no comment (a standalone tag:
// raymond strips the blank content after one that a sibling follows at
// the root, handlebars.js does not; FuzzHandlebarsJS covers comments
// against handlebars.js itself), and parameters
// that are strings, booleans, nulls or integers (raymond prints other
// numbers, arrays and maps differently).
func raymondAgrees(tmpl string, params, globals map[string]any) bool {
	for _, s := range []string{"{{#", "{{~#", "{{^", "{{~^", "{{!", "{{~!", "else", "../", "@", "lookup", "this", "{{.}}", "{{~.", "log", "[]"} {
		if strings.Contains(tmpl, s) {
			return false
		}
	}
	for _, m := range []map[string]any{params, globals} {
		for _, v := range m {
			switch x := v.(type) {
			case nil, string, bool:
			case float64:
				if x != float64(int64(x)) || x > 1e15 || x < -1e15 {
					return false
				}
			default:
				return false
			}
		}
	}
	return true
}

// documentedRaymondPanic reports the raymond panics this package documents
// as differences: a negative array index (lookup x -1, x.[-1]), which
// raymond passes to reflect's Index.
func documentedRaymondPanic(p any) bool {
	re, ok := p.(runtime.Error)
	return ok && strings.Contains(fmt.Sprint(re), "index out of range [-")
}

// FuzzAppendBounded checks invariants of any template that compiles: Append
// never fails with a recovered panic, never writes more than MaxOutputBytes,
// leaves dst untouched on error, and renders the same bytes twice.
func FuzzAppendBounded(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, src string, pick []byte, seed uint64) {
		tmpl := assemble(src, pick)
		const maxOut = 2048
		for _, mode := range []Mode{HTML, Text} {
			p, err := Compile(t.Context(), tmpl, Options{Mode: mode, MaxOutputBytes: maxOut, MaxSteps: 10_000, MaxDepth: 100, MaxSourceBytes: 1 << 16})
			if err != nil {
				var ce *Error
				if !errors.As(err, &ce) {
					t.Fatalf("Compile error %T, want *Error", err)
				}
				return
			}
			params, globals := genParams(seed)
			d := &Data{Params: params, Globals: globals}
			out1, err1 := p.Append(t.Context(), []byte("pre"), d)
			out2, err2 := p.Append(t.Context(), []byte("pre"), &Data{Params: params, Globals: globals})
			for _, err := range []error{err1, err2} {
				var re *RenderError
				if err != nil && (!errors.As(err, &re) || strings.HasPrefix(re.Msg, "panic")) {
					t.Fatalf("template %q: Append error %#v", tmpl, err)
				}
			}
			if err1 != nil && string(out1) != "pre" {
				t.Fatalf("template %q: Append returned %q with error %v", tmpl, out1, err1)
			}
			if len(out1)-len("pre") > maxOut {
				t.Fatalf("template %q: %d bytes out, limit %d", tmpl, len(out1)-3, maxOut)
			}
			if string(out1) != string(out2) || (err1 == nil) != (err2 == nil) {
				t.Fatalf("template %q: two renders differ: %q, %v / %q, %v", tmpl, out1, err1, out2, err2)
			}
		}
	})
}
