package program

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
)

// Path resolution: handlebars.js's lookupBlockParam, lookupData and
// lookupOnContext, with lookupProperty (fieldOf) for each segment.

// path resolves a path expression as handlebars.js does and reports whether
// it was found (for Data.Missing): a block parameter in scope, else a data
// variable (@index, @root) or a context (this, ../), then each further
// segment as an own property of the value so far; a segment of nil is nil.
// Nothing is looked up in parent contexts unless the path says ../.
func (s *state) path(p *path) (any, bool) {
	var v any
	parts := p.parts
	switch {
	case p.bp != "" && s.hasBlockParam(p.bp):
		v, _ = s.blockParam(p.bp)
		parts = parts[1:]
	case p.data:
		if len(parts) == 0 {
			return nil, false
		}
		var ok bool
		if v, ok = s.dataVar(p.depth, parts[0]); !ok {
			return nil, false
		}
		parts = parts[1:]
	case len(parts) > 0 && parts[0] == "":
		// {{[]}}, {{[].x}}: handlebars.js finds no name and pushes the
		// context, whatever follows.
		return s.context(p.depth), true
	default:
		v = s.context(p.depth)
	}
	return s.props(v, parts)
}

// props looks parts up in turn from v.
func (s *state) props(v any, parts []string) (any, bool) {
	for _, part := range parts {
		if v == nil {
			return nil, false
		}
		var ok bool
		if v, ok = fieldOf(v, part, s.d); !ok {
			return nil, false
		}
	}
	return v, true
}

// context returns the context depth levels up: the current one for 0,
// else handlebars.js's depths[depth]; nil beyond the root.
func (s *state) context(depth int) any {
	if depth == 0 {
		return s.cur
	}
	if i := len(s.ctx) - 1 - depth; i >= 0 {
		return s.ctx[i]
	}
	return nil
}

// hasBlockParam reports whether a block parameter called name is in scope.
func (s *state) hasBlockParam(name string) bool {
	for i := len(s.bps) - 1; i >= 0; i-- {
		for _, n := range s.bps[i].names {
			if n == name {
				return true
			}
		}
	}
	return false
}

// blockParam returns the value of the innermost block parameter called
// name: the first names the context, the second the key or index, any
// further one nothing (nil), as in handlebars.js.
func (s *state) blockParam(name string) (any, bool) {
	for i := len(s.bps) - 1; i >= 0; i-- {
		f := &s.bps[i]
		for j, n := range f.names {
			if n != name {
				continue
			}
			switch j {
			case 0:
				return f.ctx, true
			case 1:
				return f.key, true
			}
			return nil, true
		}
	}
	return nil, false
}

// dataVar is handlebars.js's data frame depth levels up, and its property
// name: root in every frame, index, key, first and last in the frames of
// {{#each}}; anything else is absent.
func (s *state) dataVar(depth int, name string) (any, bool) {
	fi := len(s.frames) - 1 - depth
	if fi < 0 {
		return nil, false
	}
	if name == "root" {
		return rootCtx, true
	}
	f := &s.frames[fi]
	if !f.iter {
		return nil, false
	}
	switch name {
	case "index":
		return f.index, true
	case "key":
		return f.key, true
	case "first":
		return f.index == 0, true
	case "last":
		return f.index == f.length-1, true
	}
	return nil, false
}

// scopedID is handlebars.js's AST.helpers.scopedId: a path that starts with
// a dot or contains the word this never names a block parameter.
func scopedID(orig string) bool {
	if strings.HasPrefix(orig, ".") {
		return true
	}
	for i := strings.Index(orig, "this"); i >= 0; {
		end := i + len("this")
		if end == len(orig) || !isWordByte(orig[end]) {
			return true
		}
		j := strings.Index(orig[end:], "this")
		if j < 0 {
			break
		}
		i = end + j
	}
	return false
}

func isWordByte(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// looseEqual is JavaScript's a == b for the values a context can be, which
// decides whether handlebars.js's options.fn(ctx) starts a new context depth
// (../ then reaches the previous one) or stays at the same depth: the same
// map or slice, or equal values after JavaScript's conversions (an object
// or array to its string form, then strings, numbers and booleans to
// numbers unless both are strings).
func looseEqual(a, b any) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	ka, kb := scalarKind(a), scalarKind(b)
	if ka == 0 && kb == 0 {
		return sameObject(a, b)
	}
	if ka == 0 {
		a, ka = primitive(a), 's'
	}
	if kb == 0 {
		b, kb = primitive(b), 's'
	}
	if ka == 's' && kb == 's' {
		sa, _ := Str(a)
		sb, _ := Str(b)
		return sa == sb
	}
	x, okx := toNumber(a)
	y, oky := toNumber(b)
	return okx && oky && x == y
}

// primitive is JavaScript's ToPrimitive of an object or array: its string
// form.
func primitive(v any) string {
	s, _ := Str(v)
	return s
}

// sameObject reports whether a and b, objects or arrays, are the same one.
func sameObject(a, b any) bool {
	switch x := a.(type) {
	case rootT:
		_, ok := b.(rootT)
		return ok
	case nullCtxT:
		_, ok := b.(nullCtxT)
		return ok
	case map[string]any:
		y, ok := b.(map[string]any)
		return ok && reflect.ValueOf(x).UnsafePointer() == reflect.ValueOf(y).UnsafePointer()
	case []any:
		y, ok := b.([]any)
		return ok && len(x) == len(y) && (len(x) == 0 || &x[0] == &y[0])
	}
	ra, rb := reflect.ValueOf(a), reflect.ValueOf(b)
	if ra.Type() != rb.Type() {
		return false
	}
	switch ra.Kind() {
	case reflect.Map, reflect.Pointer, reflect.Slice:
		return ra.UnsafePointer() == rb.UnsafePointer() && (ra.Kind() != reflect.Slice || ra.Len() == rb.Len())
	}
	return false // a struct is a new object each time
}

// scalarKind classifies a as a JavaScript number ('n'), string ('s') or
// boolean ('b'), or 0 for anything else.
func scalarKind(a any) byte {
	switch a.(type) {
	case float64, int, json.Number:
		return 'n'
	case string:
		return 's'
	case bool:
		return 'b'
	}
	switch reflect.ValueOf(a).Kind() {
	case reflect.String:
		return 's'
	case reflect.Bool:
		return 'b'
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64:
		return 'n'
	}
	return 0
}

// toNumber is JavaScript's ToNumber for a scalar: a boolean is 0 or 1, a
// string its decimal value after trimming spaces ("" is 0).
func toNumber(a any) (float64, bool) {
	if f, ok := number(a); ok {
		return f, true
	}
	rv := reflect.ValueOf(a)
	switch rv.Kind() {
	case reflect.Bool:
		if rv.Bool() {
			return 1, true
		}
		return 0, true
	case reflect.String:
		t := strings.TrimSpace(rv.String())
		if t == "" {
			return 0, true
		}
		f, err := strconv.ParseFloat(t, 64)
		return f, err == nil
	}
	return 0, false
}

// noteAbsent notes x, a block's subject (a path or a field), in d.Missing
// when it is absent.
func (s *state) noteAbsent(x *expr) {
	var found bool
	if x.kind == exPath {
		_, found = s.path(x.path)
	} else {
		_, found = s.field(x.field)
	}
	if !found {
		s.missing(x)
	}
}
