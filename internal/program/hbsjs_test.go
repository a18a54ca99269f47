package program

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/postroom/postroom/internal/testkit/hbsjs"
)

// corpusCase is one template of the handlebars.js differential corpus and
// its data (a JSON object, the root context).
type corpusCase struct {
	Name     string          `json:"name"`
	Template string          `json:"template"`
	Data     json.RawMessage `json:"data"`
	// Partials are the partials by name, for both renderers.
	Partials map[string]string `json:"partials"`
}

// loadCorpus reads testdata/hbsjs: raymond.json (the handlebars.js spec
// cases raymond ports, written by genraymond.go), mustache/*.json
// (mustache's spec, sections interpolation, sections, inverted and
// comments), email.json (templates as mail authors write them),
// partials.json (partials, partial blocks and inline partials) and
// compat.json (the edges where this package once differed: key order,
// @partial-block as a value, {{log}}, numbers). Case names are prefixed
// with their file's name.
func loadCorpus(t testing.TB) []corpusCase {
	t.Helper()
	var all []corpusCase
	read := func(file string, v any) {
		b, err := os.ReadFile(filepath.Join("testdata", "hbsjs", file))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
	}
	for _, file := range []string{"raymond.json", "email.json", "partials.json", "compat.json"} {
		var cases []corpusCase
		read(file, &cases)
		for _, c := range cases {
			c.Name = strings.TrimSuffix(file, ".json") + ": " + c.Name
			all = append(all, c)
		}
	}
	for _, section := range []string{"interpolation", "sections", "inverted", "comments"} {
		var spec struct{ Tests []corpusCase }
		read(filepath.Join("mustache", section+".json"), &spec)
		for _, c := range spec.Tests {
			c.Name = "mustache " + section + ": " + c.Name
			all = append(all, c)
		}
	}
	return all
}

// decodeData decodes a case's data as postroom decodes parameters
// (Params.UnmarshalJSON and DecodeCall): objects as *Object in their
// order, numbers as json.Number; the top level, the root context, as a
// map, as Data.Params holds it, with its keys in order, as
// Data.ParamsOrder holds them.
func decodeData(raw json.RawMessage) (any, []string, error) {
	if len(raw) == 0 {
		return nil, nil, nil
	}
	v, err := DecodeValue(raw)
	if o, ok := v.(*Object); ok {
		m := make(map[string]any, o.Len())
		var keys []string
		for k, x := range o.All() {
			m[k] = x
			keys = append(keys, k)
		}
		return m, keys, err
	}
	return v, nil, err
}

// hbsjsRefused lists, with the reason, each corpus template Compile
// refuses. The README's section "Templates: handlebars.js compatibility"
// points here.
var hbsjsRefused = map[string]string{}

// hbsjsDiffers lists, with the reason, each corpus case whose output
// differs from handlebars.js's on purpose (see the package documentation's
// differences).
var hbsjsDiffers = map[string]string{
	"email: order id beyond 2^53": "integers print exactly as given; JavaScript rounds them to the nearest float64 " +
		"(9007199254740993 becomes 9007199254740992)",
}

// TestHandlebarsJS renders the corpus with this package (HTML mode) and
// with handlebars.js 4.7 and requires the same output (CRLF normalised),
// or an error from both, for every case outside hbsjsRefused and
// hbsjsDiffers; the cases listed there must still be refused or differ.
func TestHandlebarsJS(t *testing.T) {
	js := hbsjs.Start(t)
	seen := map[string]bool{}
	for _, c := range loadCorpus(t) {
		t.Run(c.Name, func(t *testing.T) {
			if seen[c.Name] {
				t.Fatalf("two corpus cases named %q", c.Name)
			}
			seen[c.Name] = true
			ref, err := js.RenderPartials(c.Template, c.Partials, c.Data)
			if err != nil {
				t.Fatal(err)
			}
			var partials Partials
			for name, src := range c.Partials {
				pp, err := Compile(t.Context(), src, Options{Mode: HTML})
				if err != nil {
					t.Fatalf("partial %s: %v", name, err)
				}
				partials.Add(name, pp)
			}
			p, err := Compile(t.Context(), c.Template, Options{Mode: HTML})
			reason, refused := hbsjsRefused[c.Name]
			switch {
			case err != nil && !refused && ref.Err == "":
				t.Fatalf("Compile refused %q, which handlebars.js renders as %q: %v", c.Template, ref.Out, err)
			case err != nil:
				var ce *Error
				if !errors.As(err, &ce) {
					t.Fatalf("Compile error %T, want *Error", err)
				}
				t.Logf("refused, as by handlebars.js (%s): %v", ref.Err, err)
				return
			case refused:
				t.Fatalf("%q is listed as refused (%s), Compile accepts it", c.Template, reason)
			}
			data, order, err := decodeData(c.Data)
			if err != nil {
				t.Fatal(err)
			}
			params, isMap := data.(map[string]any)
			if !isMap && data != nil {
				t.Skipf("data %s is not an object: postroom's parameters always are", c.Data)
			}
			out, rerr := p.Append(t.Context(), nil, &Data{Params: params, ParamsOrder: order, Partials: &partials})
			got, want := normCRLF(string(out)), normCRLF(ref.Out)
			why, listed := hbsjsDiffers[c.Name]
			same := (rerr != nil) == (ref.Err != "") && (rerr != nil || got == want)
			switch {
			case same && listed:
				t.Fatalf("%q is listed as differing (%s), the outputs agree: %q", c.Template, why, got)
			case rerr != nil && same:
				t.Logf("render error, as in handlebars.js (%s): %v", ref.Err, rerr)
			case !same && !listed:
				t.Fatalf("template %q\ndata %s\n got %q, %v\nwant %q, %q (handlebars.js)", c.Template, c.Data, got, rerr, want, ref.Err)
			}
		})
	}
}

func normCRLF(s string) string { return strings.ReplaceAll(s, "\r\n", "\n") }

// TestCorpusSize checks the corpus holds what the README says it holds.
func TestCorpusSize(t *testing.T) {
	n := map[string]int{}
	for _, c := range loadCorpus(t) {
		n[strings.SplitN(c.Name, ":", 2)[0]]++
	}
	if n["email"] < 60 {
		t.Errorf("%d email templates, want at least 60", n["email"])
	}
	for _, k := range []string{"raymond", "mustache interpolation", "mustache sections", "mustache inverted", "mustache comments"} {
		if n[k] == 0 {
			t.Errorf("no %s cases", k)
		}
	}
}

// refusals lists what Compile refuses, each with its reason, and whether
// handlebars.js fails on it too (when rendering, if not when compiling);
// TestRefusals checks both claims. The README's section "Templates:
// handlebars.js compatibility" points here.
var refusals = []struct {
	src, reason string
	jsFails     bool
}{
	{"{{> (which)}}", "dynamic partials are not supported", true},
	{"{{> footer a b}}", "a partial takes one context argument", true},
	{`{{#*deco}}y{{/deco}}`, "decorator blocks other than inline are not supported", true},
	{"{{*deco}}", "decorators are not supported", true},
	{"{{shout name}}", "unknown helper", true},
	{"{{#shout name}}x{{/shout}}", "unknown block helper", true},
	{"{{a.b c}}", "a path called with arguments", true},
	{"{{#if a b}}x{{/if}}", "if takes one argument", true},
	{"{{#unless a b}}x{{/unless}}", "unless takes one argument", true},
	{"{{#with a b}}x{{/with}}", "with takes one argument", true},
	{"{{#each a b}}x{{/each}}", "each takes one argument", true},
	{"{{lookup a name a}}", "lookup takes two arguments", true},
	{"{{lookup a}}", "lookup takes two arguments", true},
	{"{{lookup @partial-block 'x'}}", "@partial-block is a function: only printed, tested by if, unless, with and each, or rendered as a partial", false},
	{"{{@partial-block.length}}", "a property of the @partial-block function", false},
	{"{{@partial-block}}", "handlebars.js calls the @partial-block function with its options object as the context", false},
	{"{{#@partial-block}}{{this}}{{/@partial-block}}", "handlebars.js renders a section on @partial-block with the function as this", false},
	{"{{^@partial-block}}x{{/@partial-block}}", "a section on @partial-block", false},
	{"{{#each}}x{{/each}}", "each needs its argument", true},
	{"{{lookup}}", "lookup needs two arguments", true},
	{"{{if a}}", "if outside block position", true},
	{"{{#lookup a b}}x{{/lookup}}", "lookup cannot open a block", false},
	{"{{#if (name)}}x{{/if}}", "a subexpression without arguments calls a helper of that name", true},
	{"{{#if a as |b|}}{{b}}{{/if}}", "block parameters on if: handlebars.js fails when rendering", true},
	{"{{@.}}", "a data variable needs a name (handlebars.js prints its data frame)", false},
	{"{{#if a}}x", "block never closed", true},
	{"{{#if a}}x{{/each}}", "block closed by another name", true},
	{"{{x\r}}", "raymond's lexer reads \\r as part of the name", false},
	{"{{#each@x}}{{/each}}", "a character handlebars.js does not allow after a name", true},
	{"{{lookup a +1}}", "a number handlebars.js does not read as one", true},
	{"\\{{{{x}}", "\\{{ right before {{: the two lexers end the escaped text at different places", false},
	{"a\x00", "a NUL byte, the end of input for handlebars.js's lexer", true},
	{"{{#if a}}{{else0}}{{/if}}", "else glued to what follows", false},
	{"{{{{raw}}}}{{{{{/raw}}}}", "{{{{ inside a raw block opens a nested one in handlebars.js", true},
}

// TestRefusals checks that Compile refuses each template of refusals, and
// that handlebars.js fails on those said to fail (the others it renders:
// a refusal there is a feature postroom does not have).
func TestRefusals(t *testing.T) {
	js := hbsjs.Start(t)
	for _, r := range refusals {
		t.Run(r.src, func(t *testing.T) {
			_, err := Compile(t.Context(), r.src, Options{Mode: HTML})
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("Compile(%q) = %v, want an *Error (%s)", r.src, err, r.reason)
			}
			ref, err := js.Render(r.src, map[string]any{"a": true, "name": "n"})
			if err != nil {
				t.Fatal(err)
			}
			if (ref.Err != "") != r.jsFails {
				t.Errorf("handlebars.js on %q: %+v; listed as failing: %v", r.src, ref, r.jsFails)
			}
		})
	}
}
