package program

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// Iteration: handlebars.js's each helper, which sections over arrays use
// too.

// iter runs p for one element: ctx is the context and the first block
// parameter, key the second, f the data frame (@index, @key, @first,
// @last).
func (s *state) iter(p *prog, ctx any, f frame) error {
	if err := s.step(); err != nil {
		return err
	}
	if p == nil {
		return nil
	}
	sv := s.enter(p, ctx, bpFrame{ctx: ctx, key: f.key})
	s.frames = append(s.frames, f)
	err := s.run(p)
	s.frames = s.frames[:len(s.frames)-1]
	s.leave(p, sv)
	return err
}

// each is handlebars.js's each helper over c, an array or an object, and
// returns the number of iterations: the elements of an array in order, the
// keys of an *Object (a decoded JSON object) in JavaScript's property
// order (the integer-like ones first, in numeric order, then the others as
// written), the keys of a Go map with the integer-like ones first, then
// the others sorted (a Go map has no order), the keys of the root context
// in the order of Data.ParamsOrder and Data.GlobalsOrder (see rootKeys),
// the fields of a struct in their order.
func (s *state) each(p *prog, c any) (int, error) {
	switch v := c.(type) {
	case rootT:
		return s.eachRoot(p)
	case []any:
		for i, x := range v {
			if err := s.iter(p, x, frame{iter: true, index: i, length: len(v), key: i}); err != nil {
				return i, err
			}
		}
		return len(v), nil
	case *Object:
		n := len(v.members)
		if !v.intKeys {
			for i := range v.members {
				m := &v.members[i]
				if err := s.iter(p, m.val, frame{iter: true, index: i, length: n, key: m.key}); err != nil {
					return i, err
				}
			}
			return n, nil
		}
		// JavaScript's property order: array indexes first, in numeric
		// order, then the other keys as written.
		base := len(s.keys)
		for _, m := range v.members {
			if _, ok := arrayIndex(m.key); ok {
				s.keys = append(s.keys, m.key)
			}
		}
		slices.SortFunc(s.keys[base:], compareJSKeys)
		for _, m := range v.members {
			if _, ok := arrayIndex(m.key); !ok {
				s.keys = append(s.keys, m.key)
			}
		}
		defer func() { s.keys = s.keys[:base] }()
		for i := range n {
			k := s.keys[base+i]
			x, _ := v.Get(k)
			if err := s.iter(p, x, frame{iter: true, index: i, length: n, key: k}); err != nil {
				return i, err
			}
		}
		return n, nil
	case map[string]any:
		base := len(s.keys)
		for k := range v {
			s.keys = append(s.keys, k)
		}
		keys := s.keys[base:]
		slices.SortFunc(keys, compareJSKeys)
		defer func() { s.keys = s.keys[:base] }()
		for i := range keys {
			k := s.keys[base+i]
			if err := s.iter(p, v[k], frame{iter: true, index: i, length: len(keys), key: k}); err != nil {
				return i, err
			}
		}
		return len(keys), nil
	}
	rv := reflect.ValueOf(c)
	for rv.Kind() == reflect.Pointer || rv.Kind() == reflect.Interface {
		if rv.IsNil() {
			return 0, nil
		}
		rv = rv.Elem()
	}
	switch rv.Kind() {
	case reflect.Array, reflect.Slice:
		n := rv.Len()
		for i := 0; i < n; i++ {
			x := rv.Index(i)
			var v any
			if x.CanInterface() {
				v = x.Interface()
			}
			if err := s.iter(p, v, frame{iter: true, index: i, length: n, key: i}); err != nil {
				return i, err
			}
		}
		return n, nil
	case reflect.Map:
		keys := rv.MapKeys()
		names := make([]string, len(keys))
		for i, k := range keys {
			if k.CanInterface() {
				names[i] = fmt.Sprint(k.Interface())
			}
		}
		order := make([]int, len(keys))
		for i := range order {
			order[i] = i
		}
		slices.SortFunc(order, func(a, b int) int { return compareJSKeys(names[a], names[b]) })
		for i, j := range order {
			x := rv.MapIndex(keys[j])
			var v any
			if x.CanInterface() {
				v = x.Interface()
			}
			var key any = names[j]
			if k := keys[j]; k.Kind() == reflect.String && k.CanInterface() {
				key = k.Interface()
			}
			if err := s.iter(p, v, frame{iter: true, index: i, length: len(keys), key: key}); err != nil {
				return i, err
			}
		}
		return len(keys), nil
	case reflect.Struct:
		if rv.Type() == timeType {
			return 0, nil
		}
		// The fields encoding/json would write: none behind a nil embedded
		// pointer.
		var fields []jsonField
		var values []reflect.Value
		for _, f := range jsonFields(rv.Type()) {
			if fv, err := rv.FieldByIndexErr(f.index); err == nil {
				fields, values = append(fields, f), append(values, fv)
			}
		}
		for i, f := range fields {
			if err := s.iter(p, values[i].Interface(), frame{iter: true, index: i, length: len(fields), key: f.name}); err != nil {
				return i, err
			}
		}
		return len(fields), nil
	}
	return 0, nil
}

// compareJSKeys orders object keys as JavaScript's Object.keys does for
// integer-like keys (array indexes, in numeric order, before any other
// key), and the other keys by their bytes.
func compareJSKeys(a, b string) int {
	ia, oka := arrayIndex(a)
	ib, okb := arrayIndex(b)
	switch {
	case oka && okb:
		return cmp.Compare(ia, ib)
	case oka:
		return -1
	case okb:
		return 1
	}
	return strings.Compare(a, b)
}
