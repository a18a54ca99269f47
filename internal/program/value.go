package program

import (
	"cmp"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// rootT is the type of the root context: a view of Data.Params over
// Data.Globals that is never materialized on the fast path.
type rootT struct{}

var rootCtx any = rootT{}

// bpCtx is the context raymond pushes to resolve a path that starts with a
// block parameter: a one-key map {name: value}.
type bpCtx struct {
	name  string
	value any
}

// maxPrintDepth bounds the nesting of a composite value printed as text, so
// that a cyclic map or slice is an error rather than a stack overflow.
const maxPrintDepth = 64

var errUnprintable = errors.New("program: value cannot be printed")

// Str returns the string form of v as raymond's Str does: strings as they
// are, float64 as strconv.FormatFloat(f, 'f', -1, 64), integers in decimal,
// booleans as true or false, nil as "", arrays and slices as the
// concatenation of their elements, other values as fmt's %s. A func, a chan
// or a value nested deeper than 64 levels is an error.
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

// Truthy reports whether v is true in the sense of raymond's IsTrue: nil,
// false, 0, "" and empty arrays, slices and maps are false; other values
// (structs, non-nil pointers, ...) are true.
func Truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case string:
		return x != ""
	case float64:
		return x != 0
	case int:
		return x != 0
	case map[string]any:
		return len(x) > 0
	case []any:
		return len(x) > 0
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return rv.Len() > 0
	case reflect.Bool:
		return rv.Bool()
	case reflect.Complex64, reflect.Complex128:
		return rv.Complex() != 0
	case reflect.Chan, reflect.Func, reflect.Pointer, reflect.Interface:
		return !rv.IsNil()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return rv.Int() != 0
	case reflect.Float32, reflect.Float64:
		return rv.Float() != 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return rv.Uint() != 0
	case reflect.Struct:
		return true
	}
	return false
}

// appendFloat appends f as strconv.FormatFloat(f, 'f', -1, 64) does, with a
// shortcut for the integers JSON numbers usually are.
func appendFloat(dst []byte, f float64) []byte {
	if f >= -1e15 && f <= 1e15 && f != 0 {
		if i := int64(f); float64(i) == f {
			return strconv.AppendInt(dst, i, 10)
		}
	}
	return strconv.AppendFloat(dst, f, 'f', -1, 64)
}

// escTable marks the bytes raymond's Escape replaces.
var escTable = [256]bool{'&': true, '\'': true, '<': true, '>': true, '"': true}

// appendEscaped appends s to dst, HTML-escaped as raymond's Escape does.
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
			dst = append(dst, "&apos;"...)
		case '<':
			dst = append(dst, "&lt;"...)
		case '>':
			dst = append(dst, "&gt;"...)
		case '"':
			dst = append(dst, "&quot;"...)
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

// appendStr appends the string form of v (see Str), escaped when esc.
// steps, when not nil, is charged one step per element printed.
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
	case []any:
		if depth >= maxPrintDepth {
			return dst, errUnprintable
		}
		var err error
		for _, e := range x {
			if steps != nil {
				*steps--
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
	errorType    = reflect.TypeFor[error]()
	stringerType = reflect.TypeFor[fmt.Stringer]()
)

// appendReflect is raymond's strValue for values beyond encoding/json's.
func appendReflect(dst []byte, rv reflect.Value, esc bool, depth int, steps *int) ([]byte, error) {
	if depth >= maxPrintDepth {
		return dst, errUnprintable
	}
	for rv.Kind() == reflect.Pointer && !rv.IsNil() {
		if rv.Type().Implements(errorType) || rv.Type().Implements(stringerType) {
			break
		}
		rv = rv.Elem()
	}
	for rv.Kind() == reflect.Interface && !rv.IsNil() {
		rv = rv.Elem()
	}
	if !rv.IsValid() {
		return dst, nil
	}
	if !rv.CanInterface() {
		return dst, errUnprintable
	}
	switch rv.Kind() {
	case reflect.Chan, reflect.Func, reflect.UnsafePointer:
		return dst, fmt.Errorf("%w: %s", errUnprintable, rv.Type())
	case reflect.Array, reflect.Slice:
		var err error
		for i := 0; i < rv.Len(); i++ {
			if steps != nil {
				*steps--
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
		return strconv.AppendFloat(dst, rv.Float(), 'f', -1, 64), nil
	case reflect.String:
		if !rv.Type().Implements(errorType) && !rv.Type().Implements(stringerType) {
			return appendString(dst, rv.String(), esc), nil
		}
	case reflect.Map, reflect.Struct:
		// fmt prints these recursively: check first that it terminates and
		// calls no func.
		if err := checkPrintable(rv, depth, steps); err != nil {
			return dst, err
		}
	}
	return appendString(dst, fmt.Sprintf("%s", rv.Interface()), esc), nil
}

// checkPrintable walks a composite value that fmt will print, refusing
// cycles (by depth), funcs and chans.
func checkPrintable(rv reflect.Value, depth int, steps *int) error {
	if depth >= maxPrintDepth {
		return errUnprintable
	}
	if steps != nil {
		*steps--
		if *steps < 0 {
			return ErrTooManySteps
		}
	}
	switch rv.Kind() {
	case reflect.Chan, reflect.Func, reflect.UnsafePointer:
		return fmt.Errorf("%w: %s", errUnprintable, rv.Type())
	case reflect.Pointer, reflect.Interface:
		if rv.IsNil() {
			return nil
		}
		return checkPrintable(rv.Elem(), depth+1, steps)
	case reflect.Array, reflect.Slice:
		for i := 0; i < rv.Len(); i++ {
			if err := checkPrintable(rv.Index(i), depth+1, steps); err != nil {
				return err
			}
		}
	case reflect.Map:
		it := rv.MapRange()
		for it.Next() {
			if err := checkPrintable(it.Key(), depth+1, steps); err != nil {
				return err
			}
			if err := checkPrintable(it.Value(), depth+1, steps); err != nil {
				return err
			}
		}
	case reflect.Struct:
		for i := 0; i < rv.NumField(); i++ {
			if err := checkPrintable(rv.Field(i), depth+1, steps); err != nil {
				return err
			}
		}
	}
	return nil
}

// fieldOf is raymond's evalField: the value of field name of c (a map key, a
// struct field, an array index) and whether it is present. A present field
// may hold nil. d resolves the root context; nil means c is never the root.
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
		i, err := strconv.Atoi(name)
		if err != nil || i < 0 || i >= len(x) {
			return nil, false
		}
		return x[i], true
	case *bpCtx:
		if x.name == name {
			return x.value, true
		}
		return nil, false
	case nil, string, float64, bool, int:
		return nil, false
	}
	return fieldReflect(reflect.ValueOf(c), name)
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
		if i, err := strconv.Atoi(name); err == nil && i >= 0 && i < rv.Len() {
			res = rv.Index(i)
		}
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
