package program

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"
)

// rootT is the type of the root context: a view of Data.Params over
// Data.Globals that is never materialized on the fast path.
type rootT struct{}

var rootCtx any = rootT{}

// nullCtxT is the type of handlebars.js's container.nullContext: the
// empty object a block helper receives as this when the current context
// is null, and renders its block or inverse in.
type nullCtxT struct{}

var nullCtx any = nullCtxT{}

// maxPrintDepth bounds the nesting of an array printed as text, so that a
// cyclic slice is an error rather than a stack overflow.
const maxPrintDepth = 64

var errUnprintable = errors.New("program: value cannot be printed")

// Str returns the string form of v as handlebars.js prints a value (JavaScript's
// String(v)): strings as they are, numbers as JavaScript prints them (1e-7,
// 1e+21, 0 for -0) except that integers print exactly as given (an int64, a
// uint64, a json.Number written as an integer), booleans as true and false,
// nil as "", arrays as their elements joined with commas (a nil element as
// ""), maps and structs as [object Object], a time.Time as encoding/json
// writes it. A func, a chan or an array nested deeper than 64 levels is an
// error.
func Str(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case nil:
		return "", nil
	}
	b, err := appendStr(nil, v, false, 0, nil)
	return string(b), err
}

// Truthy reports whether v is true in the sense of handlebars.js's {{#if}}:
// nil, false, 0, NaN, "" and empty arrays and slices are false; anything
// else, an empty map or a struct included, is true.
func Truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case string:
		return x != ""
	case float64:
		return x != 0 && x == x
	case int:
		return x != 0
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		return err != nil || f != 0
	case map[string]any, rootT:
		return true
	case []any:
		return len(x) > 0
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Array, reflect.Slice, reflect.String:
		return rv.Len() > 0
	case reflect.Map:
		return !rv.IsNil()
	case reflect.Bool:
		return rv.Bool()
	case reflect.Complex64, reflect.Complex128:
		return rv.Complex() != 0
	case reflect.Chan, reflect.Func, reflect.Pointer, reflect.Interface:
		return !rv.IsNil()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return rv.Int() != 0
	case reflect.Float32, reflect.Float64:
		f := rv.Float()
		return f != 0 && f == f
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return rv.Uint() != 0
	case reflect.Struct:
		return true
	}
	return false
}

// isZero reports whether v is the number 0, which includeZero=true makes
// true for {{#if}} and which {{#with}} renders (handlebars.js's isEmpty).
func isZero(v any) bool {
	if f, ok := number(v); ok {
		return f == 0
	}
	return false
}

// notEmpty is handlebars.js's !isEmpty, the test of {{#with}}: Truthy, or
// the number 0.
func notEmpty(v any) bool { return Truthy(v) || isZero(v) }

// isArray reports whether v is an array for handlebars.js: a []any or
// another Go slice or array (a []byte included).
func isArray(v any) bool {
	switch v.(type) {
	case []any:
		return true
	case nil, string, float64, bool, int, map[string]any, rootT, json.Number:
		return false
	}
	k := reflect.ValueOf(v).Kind()
	return k == reflect.Slice || k == reflect.Array
}

// isObject reports whether v is a JavaScript object that {{#each}}
// iterates: an array, a map or a struct, directly or behind a pointer.
func isObject(v any) bool {
	switch v.(type) {
	case []any, map[string]any, rootT:
		return true
	case nil, string, float64, bool, int, json.Number:
		return false
	}
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer || rv.Kind() == reflect.Interface {
		if rv.IsNil() {
			return false
		}
		rv = rv.Elem()
	}
	switch rv.Kind() {
	case reflect.Slice, reflect.Map:
		return !rv.IsNil()
	case reflect.Array, reflect.Struct:
		return true
	}
	return false
}

// appendFloat appends f as JavaScript's Number.prototype.toString does:
// the shortest digits that read back as f, in decimal notation for
// 1e-6 <= |f| < 1e21 and in exponent notation (1e+21, 1e-7) beyond; -0
// prints 0.
func appendFloat(dst []byte, f float64) []byte {
	switch {
	case f == 0:
		return append(dst, '0')
	case f != f:
		return append(dst, "NaN"...)
	case math.IsInf(f, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(f, -1):
		return append(dst, "-Infinity"...)
	case f >= -1e15 && f <= 1e15:
		if i := int64(f); float64(i) == f {
			return strconv.AppendInt(dst, i, 10)
		}
	}
	if a := math.Abs(f); a >= 1e-6 && a < 1e21 {
		return strconv.AppendFloat(dst, f, 'f', -1, 64)
	}
	var buf [32]byte
	e := strconv.AppendFloat(buf[:0], f, 'e', -1, 64) // 1.5e-07, 1e+21
	i := bytes.IndexByte(e, 'e')
	dst = append(dst, e[:i+2]...) // mantissa, 'e' and the sign
	exp := e[i+2:]
	for len(exp) > 1 && exp[0] == '0' {
		exp = exp[1:]
	}
	return append(dst, exp...)
}

// appendNumber appends a json.Number: an integer exactly as written (-0 as
// 0), any other number as appendFloat prints its value.
func appendNumber(dst []byte, n json.Number) []byte {
	if isIntLiteral(string(n)) {
		if n == "-0" {
			return append(dst, '0')
		}
		return append(dst, n...)
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return append(dst, n...)
	}
	return appendFloat(dst, f)
}

// isIntLiteral reports whether s is an optional minus sign followed by
// decimal digits only.
func isIntLiteral(s string) bool {
	if len(s) > 0 && s[0] == '-' {
		s = s[1:]
	}
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// escTable marks the bytes handlebars.js's escapeExpression replaces.
var escTable = [256]bool{'&': true, '\'': true, '<': true, '>': true, '"': true, '`': true, '=': true}

// appendEscaped appends s to dst, HTML-escaped as handlebars.js's
// escapeExpression does.
func appendEscaped(dst []byte, s string) []byte {
	last := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !escTable[c] {
			continue
		}
		dst = append(dst, s[last:i]...)
		switch c {
		case '&':
			dst = append(dst, "&amp;"...)
		case '\'':
			dst = append(dst, "&#x27;"...)
		case '<':
			dst = append(dst, "&lt;"...)
		case '>':
			dst = append(dst, "&gt;"...)
		case '"':
			dst = append(dst, "&quot;"...)
		case '`':
			dst = append(dst, "&#x60;"...)
		case '=':
			dst = append(dst, "&#x3D;"...)
		}
		last = i + 1
	}
	return append(dst, s[last:]...)
}

func appendString(dst []byte, s string, esc bool) []byte {
	if esc {
		return appendEscaped(dst, s)
	}
	return append(dst, s...)
}

// objectString is how JavaScript prints an object.
const objectString = "[object Object]"

// appendStr appends the string form of v (see Str), escaped when esc.
// steps, when not nil, is charged one step per array element printed.
func appendStr(dst []byte, v any, esc bool, depth int, steps *int) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return dst, nil
	case string:
		return appendString(dst, x, esc), nil
	case float64:
		return appendFloat(dst, x), nil
	case bool:
		return strconv.AppendBool(dst, x), nil
	case int:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case json.Number:
		return appendNumber(dst, x), nil
	case map[string]any, rootT, nullCtxT:
		return append(dst, objectString...), nil
	case []any:
		if depth >= maxPrintDepth {
			return dst, errUnprintable
		}
		var err error
		for i, e := range x {
			if steps != nil {
				*steps--
			}
			if i > 0 {
				dst = append(dst, ',')
			}
			if dst, err = appendStr(dst, e, esc, depth+1, steps); err != nil {
				return dst, err
			}
		}
		return dst, nil
	}
	return appendReflect(dst, reflect.ValueOf(v), esc, depth, steps)
}

var (
	timeType   = reflect.TypeFor[time.Time]()
	numberType = reflect.TypeFor[json.Number]()
)

// appendReflect prints values beyond encoding/json's as their JSON round
// trip would print in handlebars.js.
func appendReflect(dst []byte, rv reflect.Value, esc bool, depth int, steps *int) ([]byte, error) {
	if depth >= maxPrintDepth {
		return dst, errUnprintable
	}
	for (rv.Kind() == reflect.Pointer || rv.Kind() == reflect.Interface) && !rv.IsNil() {
		rv = rv.Elem()
	}
	if !rv.IsValid() {
		return dst, nil
	}
	if !rv.CanInterface() {
		return dst, errUnprintable
	}
	switch rv.Kind() {
	case reflect.Pointer, reflect.Interface:
		return dst, nil // nil
	case reflect.Chan, reflect.Func, reflect.UnsafePointer, reflect.Complex64, reflect.Complex128:
		return dst, fmt.Errorf("%w: %s", errUnprintable, rv.Type())
	case reflect.Array, reflect.Slice:
		if rv.Kind() == reflect.Slice && rv.IsNil() {
			return dst, nil // JSON null
		}
		var err error
		for i := 0; i < rv.Len(); i++ {
			if steps != nil {
				*steps--
			}
			if i > 0 {
				dst = append(dst, ',')
			}
			if dst, err = appendReflect(dst, rv.Index(i), esc, depth+1, steps); err != nil {
				return dst, err
			}
		}
		return dst, nil
	case reflect.Bool:
		return strconv.AppendBool(dst, rv.Bool()), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.AppendInt(dst, rv.Int(), 10), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return strconv.AppendUint(dst, rv.Uint(), 10), nil
	case reflect.Float32, reflect.Float64:
		return appendFloat(dst, rv.Float()), nil
	case reflect.String:
		if rv.Type() == numberType {
			return appendNumber(dst, json.Number(rv.String())), nil
		}
		return appendString(dst, rv.String(), esc), nil
	case reflect.Map:
		if rv.IsNil() {
			return dst, nil // JSON null
		}
	case reflect.Struct:
		if rv.Type() == timeType {
			t := rv.Interface().(time.Time)
			return appendString(dst, t.Format(time.RFC3339Nano), esc), nil
		}
	}
	return append(dst, objectString...), nil
}

// fieldOf is handlebars.js's lookupProperty: the value of the own
// property name of c (a map key, a struct field, an array index or length,
// a string's character or length) and whether it is present. A present
// field may hold nil. d resolves the root context; nil means c is never
// the root.
func fieldOf(c any, name string, d *Data) (any, bool) {
	switch x := c.(type) {
	case map[string]any:
		v, ok := x[name]
		return v, ok
	case rootT:
		if d == nil {
			return nil, false
		}
		if v, ok := d.Params[name]; ok {
			return v, true
		}
		v, ok := d.Globals[name]
		return v, ok
	case []any:
		if name == "length" {
			return len(x), true
		}
		if i, ok := arrayIndex(name); ok && i < len(x) {
			return x[i], true
		}
		return nil, false
	case string:
		return stringField(x, name)
	case nil, float64, bool, int, json.Number:
		return nil, false
	}
	return fieldReflect(reflect.ValueOf(c), name)
}

// arrayIndex returns the index a property name stands for in JavaScript:
// only the canonical decimal form of an integer (0, 12; not 01, +1 or -1).
func arrayIndex(name string) (int, bool) {
	if name == "" || len(name) > 10 || (name[0] == '0' && len(name) > 1) {
		return 0, false
	}
	n := 0
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, n < 1<<32-1
}

// stringField is a JavaScript string's own properties: length and the
// characters by index, both counted in UTF-16 code units (a lone half of a
// surrogate pair reads as U+FFFD).
func stringField(s, name string) (any, bool) {
	if name == "length" {
		n := 0
		for _, r := range s {
			n += utf16.RuneLen(r)
		}
		return n, true
	}
	i, ok := arrayIndex(name)
	if !ok {
		return nil, false
	}
	for _, r := range s {
		n := utf16.RuneLen(r)
		if i < n {
			if n == 1 {
				return string(r), true
			}
			return string(utf8.RuneError), true
		}
		i -= n
	}
	return nil, false
}

func fieldReflect(rv reflect.Value, name string) (any, bool) {
	for rv.Kind() == reflect.Pointer || rv.Kind() == reflect.Interface {
		if rv.IsNil() {
			return nil, false
		}
		rv = rv.Elem()
	}
	var res reflect.Value
	switch rv.Kind() {
	case reflect.Struct:
		if rv.Type() == timeType {
			return nil, false // a string once encoded
		}
		for _, f := range jsonFields(rv.Type()) {
			if f.name == name {
				if v, err := rv.FieldByIndexErr(f.index); err == nil {
					res = v
				}
				break
			}
		}
	case reflect.Map:
		kt := rv.Type().Key()
		if reflect.TypeFor[string]().AssignableTo(kt) {
			res = rv.MapIndex(reflect.ValueOf(name).Convert(reflect.TypeFor[string]()))
		}
	case reflect.Array, reflect.Slice:
		if name == "length" && (rv.Kind() == reflect.Array || !rv.IsNil()) {
			return rv.Len(), true
		}
		if i, ok := arrayIndex(name); ok && i < rv.Len() {
			res = rv.Index(i)
		}
	case reflect.String:
		if rv.Type() == numberType {
			return nil, false
		}
		return stringField(rv.String(), name)
	}
	if !res.IsValid() || !res.CanInterface() {
		return nil, false
	}
	for res.Kind() == reflect.Pointer || res.Kind() == reflect.Interface {
		if res.IsNil() {
			return res.Interface(), true
		}
		res = res.Elem()
	}
	return res.Interface(), true
}

// jsonField is a struct field as encoding/json names it.
type jsonField struct {
	name   string
	index  []int
	tagged bool
	depth  int
}

// jsonFields lists the fields of struct type t that encoding/json would
// encode, under the names it would give them, in its order: the name of
// the json tag (options such as omitempty play no part), else the field's
// own name; json:"-" and unexported fields left out; the fields of an
// untagged embedded struct promoted, a shallower field hiding deeper ones
// of the same name, a tagged one winning among fields at the same depth,
// and the name dropped when that leaves several.
func jsonFields(t reflect.Type) []jsonField {
	type embedded struct {
		t     reflect.Type
		index []int
	}
	var all []jsonField
	visited := map[reflect.Type]bool{}
	next := []embedded{{t: t}}
	for depth := 0; len(next) > 0; depth++ {
		current := next
		next = nil
		for _, e := range current {
			if visited[e.t] {
				continue
			}
			visited[e.t] = true
			for i := 0; i < e.t.NumField(); i++ {
				f := e.t.Field(i)
				ft := f.Type
				if ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if !f.IsExported() && !(f.Anonymous && ft.Kind() == reflect.Struct) {
					continue
				}
				tag := f.Tag.Get("json")
				if tag == "-" {
					continue
				}
				name, _, _ := strings.Cut(tag, ",")
				index := append(e.index[:len(e.index):len(e.index)], i)
				if name == "" && f.Anonymous && ft.Kind() == reflect.Struct {
					next = append(next, embedded{ft, index})
					continue
				}
				if !f.IsExported() {
					continue // an unexported embedded struct with a tag
				}
				tagged := name != ""
				if !tagged {
					name = f.Name
				}
				all = append(all, jsonField{name: name, index: index, tagged: tagged, depth: depth})
			}
		}
	}
	// Keep, per name, the one dominant field, as encoding/json does.
	slices.SortStableFunc(all, func(a, b jsonField) int {
		return cmp.Or(strings.Compare(a.name, b.name), cmp.Compare(a.depth, b.depth), compareBool(b.tagged, a.tagged))
	})
	out := all[:0]
	for i := 0; i < len(all); {
		j := i + 1
		for j < len(all) && all[j].name == all[i].name {
			j++
		}
		f := all[i]
		if j-i == 1 || all[i+1].depth > f.depth || (f.tagged && !all[i+1].tagged) {
			out = append(out, f)
		}
		i = j
	}
	slices.SortFunc(out, func(a, b jsonField) int { return slices.Compare(a.index, b.index) })
	return out
}

func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// isNull reports whether v is JavaScript's null once encoded: nil, or a
// nil pointer, map, slice or interface.
func isNull(v any) bool {
	if v == nil {
		return true
	}
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Interface:
		return rv.IsNil()
	}
	return false
}

// jsTruthy is JavaScript's truthiness (!!v): unlike Truthy, an empty array
// is true.
func jsTruthy(v any) bool { return Truthy(v) || (isArray(v) && !isNull(v)) }

// HoldsObject reports whether v prints as handlebars.js prints an object,
// "[object Object]", or holds one: a map, a struct other than time.Time,
// the root or null context, or an array or slice with such an element.
// A helper's string parameter refuses such a value, which would print as
// nothing a reader could use.
func HoldsObject(v any) bool {
	switch x := v.(type) {
	case nil, string, float64, bool, int, json.Number:
		return false
	case map[string]any, rootT, nullCtxT:
		return true
	case []any:
		for _, e := range x {
			if HoldsObject(e) {
				return true
			}
		}
		return false
	}
	return reflectHoldsObject(reflect.ValueOf(v), 0)
}

func reflectHoldsObject(rv reflect.Value, depth int) bool {
	if depth >= maxPrintDepth {
		return false // unprintable: Str says so
	}
	for (rv.Kind() == reflect.Pointer || rv.Kind() == reflect.Interface) && !rv.IsNil() {
		rv = rv.Elem()
	}
	switch rv.Kind() {
	case reflect.Map:
		return !rv.IsNil()
	case reflect.Struct:
		return rv.Type() != timeType
	case reflect.Array, reflect.Slice:
		for i := 0; i < rv.Len(); i++ {
			if reflectHoldsObject(rv.Index(i), depth+1) {
				return true
			}
		}
	}
	return false
}
