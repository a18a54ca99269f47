package program

import (
	"cmp"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

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
	case *Object:
		return x.Get(name)
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
