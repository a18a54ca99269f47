package program

import (
	"encoding/json"
	"reflect"
	"strconv"
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
	case *Object:
		return x != nil
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
	case nil, string, float64, bool, int, map[string]any, rootT, json.Number, *Object:
		return false
	}
	k := reflect.ValueOf(v).Kind()
	return k == reflect.Slice || k == reflect.Array
}

// isObject reports whether v is a JavaScript object that {{#each}}
// iterates: an array, a map or a struct, directly or behind a pointer.
func isObject(v any) bool {
	switch o := v.(type) {
	case []any, map[string]any, rootT:
		return true
	case *Object:
		return o != nil
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
