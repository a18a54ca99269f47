package program

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/aymerick/raymond"
	"github.com/aymerick/raymond/ast"
	"github.com/aymerick/raymond/parser"
)

// refResult is the outcome of rendering with raymond, the reference.
type refResult struct {
	out      string
	err      error
	panicked any // raymond re-panics runtime errors
	skipped  string
}

// helperArities returns, for each extra helper called in src, the numbers
// of arguments it is called with.
func helperArities(prog *ast.Program) map[string]map[int]bool {
	ar := map[string]map[int]bool{}
	var expr func(e *ast.Expression)
	var param func(n ast.Node)
	var program func(p *ast.Program)
	param = func(n ast.Node) {
		if sub, ok := n.(*ast.SubExpression); ok {
			expr(sub.Expression)
		}
	}
	expr = func(e *ast.Expression) {
		if name := e.HelperName(); name != "" {
			if ar[name] == nil {
				ar[name] = map[int]bool{}
			}
			ar[name][len(e.Params)] = true
		}
		for _, p := range e.Params {
			param(p)
		}
		if e.Hash != nil {
			for _, p := range e.Hash.Pairs {
				param(p.Val)
			}
		}
	}
	program = func(p *ast.Program) {
		if p == nil {
			return
		}
		for _, st := range p.Body {
			switch st := st.(type) {
			case *ast.MustacheStatement:
				expr(st.Expression)
			case *ast.BlockStatement:
				expr(st.Expression)
				program(st.Program)
				program(st.Inverse)
			}
		}
	}
	program(prog)
	return ar
}

// inBlockPosition reports whether the helper raymond is calling opened the
// current block ({{#eq a b}}) rather than standing in a mustache or a
// subexpression. raymond does not tell its helpers, so this reads its
// evaluator's stacks (v2.0.2) by reflection, read-only.
func inBlockPosition(options *raymond.Options) bool {
	ev := reflect.ValueOf(options).Elem().FieldByName("eval").Elem()
	blocks, exprs := ev.FieldByName("blocks"), ev.FieldByName("exprs")
	if blocks.Len() == 0 || exprs.Len() == 0 {
		return false
	}
	cur := blocks.Index(blocks.Len() - 1).Elem().FieldByName("Expression").Pointer()
	return cur == exprs.Index(exprs.Len()-1).Pointer()
}

var (
	anyType     = reflect.TypeFor[any]()
	optionsType = reflect.TypeFor[*raymond.Options]()
)

// refHelper wraps one of postroom's helpers as a raymond helper taking n
// arguments: its value in a mustache or subexpression; as a block, the
// block when the value is truthy (raymond.IsTrue), else the inverse.
func refHelper(fn func([]any) (any, error), n int) any {
	in := make([]reflect.Type, n+1)
	for i := range n {
		in[i] = anyType
	}
	in[n] = optionsType
	ft := reflect.FuncOf(in, []reflect.Type{anyType}, false)
	return reflect.MakeFunc(ft, func(args []reflect.Value) []reflect.Value {
		vals := make([]any, n)
		for i := range n {
			vals[i] = args[i].Interface()
		}
		options := args[n].Interface().(*raymond.Options)
		v, err := fn(vals)
		if err != nil {
			panic(err) // raymond turns an error panic into Exec's error
		}
		if inBlockPosition(options) {
			if raymond.IsTrue(v) {
				v = options.Fn()
			} else {
				v = options.Inverse()
			}
		}
		return []reflect.Value{reflect.ValueOf(&v).Elem()}
	}).Interface()
}

// sortedCopy copies JSON-like data, inserting map keys in sorted order so
// that Go's small-map iteration yields the sorted order often.
func sortedCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for _, k := range slices.Sorted(maps.Keys(x)) {
			m[k] = sortedCopy(x[k])
		}
		return m
	case []any:
		s := make([]any, len(x))
		for i, e := range x {
			s[i] = sortedCopy(e)
		}
		return s
	}
	return v
}

// merged is the root context raymond needs: globals overridden by params.
func merged(params, globals map[string]any) map[string]any {
	m := map[string]any{}
	for _, k := range slices.Sorted(maps.Keys(merge(params, globals))) {
		if v, ok := params[k]; ok {
			m[k] = sortedCopy(v)
		} else {
			m[k] = sortedCopy(globals[k])
		}
	}
	return m
}

func merge(a, b map[string]any) map[string]any {
	m := maps.Clone(b)
	if m == nil {
		m = map[string]any{}
	}
	maps.Copy(m, a)
	return m
}

// refTemplate parses src with raymond and registers postroom's helpers on
// the template (never globally) with the arity the template uses, and a
// silent log. skipped is set when a helper is called with several arities,
// which a raymond helper cannot accept.
func refTemplate(src string) (tpl *raymond.Template, skipped string, err error) {
	tree, err := parser.Parse(src)
	if err != nil {
		return nil, "", err
	}
	tpl, err = raymond.Parse(src)
	if err != nil {
		return nil, "", err
	}
	ar := helperArities(tree)
	for name, fn := range ExtraHelpers() {
		if ar[name][0] {
			// Alone ({{ne}}), postroom's helper name is a param, as in
			// handlebars.js; raymond calls the helper.
			return nil, fmt.Sprintf("helper %s alone", name), nil
		}
		n := 1
		switch len(ar[name]) {
		case 0:
		case 1:
			for k := range ar[name] {
				n = k
			}
		default:
			return nil, fmt.Sprintf("helper %s called with several arities", name), nil
		}
		tpl.RegisterHelper(name, refHelper(fn, n))
	}
	tpl.RegisterHelper("log", func(message string) any { return "" })
	return tpl, "", nil
}

// refAttempts bounds the renders refMatch tries: raymond's each visits a
// map in Go's random order, and the sorted order this package produces is
// one of those raymond produces (often, given sortedCopy).
const refAttempts = 300

// refMatch renders src with raymond until its output equals want or
// refAttempts renders were tried, and returns the last result.
func refMatch(src string, params, globals map[string]any, want string) refResult {
	tpl, skipped, err := refTemplate(src)
	if err != nil || skipped != "" {
		return refResult{err: err, skipped: skipped}
	}
	ctx := merged(params, globals)
	var r refResult
	for range refAttempts {
		if r = refExec(tpl, ctx); r.err != nil || r.panicked != nil || r.out == want {
			break
		}
	}
	return r
}

func refExec(tpl *raymond.Template, ctx map[string]any) (r refResult) {
	defer func() {
		if p := recover(); p != nil {
			r = refResult{panicked: p}
		}
	}()
	out, err := tpl.Exec(ctx)
	return refResult{out: out, err: err}
}

// render compiles and renders src with this package.
func render(t testing.TB, src string, mode Mode, params, globals map[string]any) (string, error) {
	t.Helper()
	p, err := Compile(t.Context(), src, Options{Mode: mode})
	if err != nil {
		t.Fatalf("Compile(%q): %v", src, err)
	}
	out, err := p.Append(t.Context(), nil, &Data{Params: params, Globals: globals})
	return string(out), err
}

// usesPostroomHelpers reports whether src calls one of postroom's own
// helpers or raymond's equal, which handlebars.js does not have.
func usesPostroomHelpers(t testing.TB, src string) bool {
	t.Helper()
	tree, err := parser.Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	return callsPostroomHelper(tree)
}

// callsPostroomHelper reports whether the parsed template calls one of
// postroom's own helpers or raymond's equal with arguments.
func callsPostroomHelper(tree *ast.Program) bool {
	extra := ExtraHelpers()
	for name, arities := range helperArities(tree) {
		if _, ok := extra[name]; !ok && name != "equal" {
			continue
		}
		for n := range arities {
			if n > 0 {
				return true
			}
		}
	}
	return false
}

// normEscapes maps the escapes of handlebars.js and raymond to one form:
// raymond writes ' as &apos; and leaves ` and = alone, handlebars.js
// writes &#x27;, &#x60; and &#x3D;.
func normEscapes(s string) string {
	return strings.NewReplacer("&apos;", "'", "&#x27;", "'", "&#x60;", "`", "&#x3D;", "=").Replace(s)
}
