package program

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"
)

// Iteration: raymond's each helper and sections over arrays.

// iter is raymond's evalProgram for one iteration: push ctx unless nil, a
// data frame, and the block parameters (ctx, key).
func (s *state) iter(p *prog, ctx any, f frame, key any) error {
	if err := s.step(); err != nil {
		return err
	}
	s.enter(p, ctx, bpFrame{ctx: ctx, key: key, hasKey: key != nil})
	s.frames = append(s.frames, f)
	err := s.run(p)
	s.frames = s.frames[:len(s.frames)-1]
	s.leave(p, ctx)
	return err
}

func (s *state) eachSlice(p *prog, v []any) error {
	for i, x := range v {
		if err := s.iter(p, x, frame{iter: true, index: i, length: len(v)}, intKey(i, len(p.params))); err != nil {
			return err
		}
	}
	return nil
}

func (s *state) eachReflectSlice(p *prog, rv reflect.Value) error {
	n := rv.Len()
	for i := 0; i < n; i++ {
		x := rv.Index(i)
		var v any
		if x.CanInterface() {
			v = x.Interface()
		}
		if err := s.iter(p, v, frame{iter: true, index: i, length: n}, intKey(i, len(p.params))); err != nil {
			return err
		}
	}
	return nil
}

// intKey boxes the index for the second block parameter only when there is
// one to bind; any non-nil value tells iter the key exists.
func intKey(i, params int) any {
	if params > 1 {
		return i
	}
	return true
}

// each is raymond's each helper, except that maps are visited in sorted key
// order.
func (s *state) each(p *prog, c any) error {
	if p == nil {
		return nil
	}
	switch v := c.(type) {
	case []any:
		return s.eachSlice(p, v)
	case map[string]any:
		base := len(s.keys)
		for k := range v {
			s.keys = append(s.keys, k)
		}
		keys := s.keys[base:]
		slices.Sort(keys)
		defer func() { s.keys = s.keys[:base] }()
		for i := range keys {
			k := s.keys[base+i]
			var key any = k
			if err := s.iter(p, v[k], frame{iter: true, index: i, length: len(keys), key: key}, key); err != nil {
				return err
			}
		}
		return nil
	}
	rv := reflect.ValueOf(c)
	for rv.Kind() == reflect.Pointer || rv.Kind() == reflect.Interface {
		if rv.IsNil() {
			return nil
		}
		rv = rv.Elem()
	}
	switch rv.Kind() {
	case reflect.Array, reflect.Slice:
		return s.eachReflectSlice(p, rv)
	case reflect.Map:
		keys := rv.MapKeys()
		slices.SortFunc(keys, compareKeys)
		for i, k := range keys {
			if !k.CanInterface() {
				continue
			}
			key := k.Interface()
			x := rv.MapIndex(k)
			var v any
			if x.CanInterface() {
				v = x.Interface()
			}
			if err := s.iter(p, v, frame{iter: true, index: i, length: len(keys), key: key}, key); err != nil {
				return err
			}
		}
	case reflect.Struct:
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
			if err := s.iter(p, values[i].Interface(), frame{iter: true, index: i, length: len(fields), key: f.name}, f.name); err != nil {
				return err
			}
		}
	}
	return nil
}

// compareKeys orders map keys: numbers numerically, strings and anything
// else by their printed form.
func compareKeys(a, b reflect.Value) int {
	if x, ok := number(a.Interface()); ok {
		if y, ok := number(b.Interface()); ok {
			return cmp.Compare(x, y)
		}
	}
	return cmp.Compare(fmt.Sprint(a.Interface()), fmt.Sprint(b.Interface()))
}
