package program

import (
	"reflect"
)

// Path resolution: raymond's evalPathExpression and the lookups under it.

// path resolves a path expression as raymond's evalPathExpression does, and
// reports whether it was found (for Data.Missing).
func (s *state) path(p *path) (any, bool) {
	if p.first != "" {
		if v, ok := s.blockParam(p.first); ok {
			s.bp = bpCtx{name: p.first, value: v}
			s.ctx = append(s.ctx, &s.bp)
			r, found := s.ctxPath(p)
			s.ctx[len(s.ctx)-1] = nil
			s.ctx = s.ctx[:len(s.ctx)-1]
			s.bp = bpCtx{}
			return r, found
		}
	}
	var r any
	found, tried := false, false
	if p.dataRoot {
		r, found = s.ctxPath(p)
		tried = true
	}
	if r == nil && p.data {
		var f bool
		if r, f = s.dataPath(p); f {
			found = true
		}
	}
	if r == nil && !tried {
		var f bool
		if r, f = s.ctxPath(p); f {
			found = true
		}
	}
	return r, found
}

// blockParam finds the innermost block parameter called name. A parameter
// bound to nil hides outer ones but counts as absent, as in raymond.
func (s *state) blockParam(name string) (any, bool) {
	for i := len(s.bps) - 1; i >= 0; i-- {
		f := &s.bps[i]
		if f.hasKey && len(f.names) > 1 && f.names[1] == name {
			return f.key, f.key != nil
		}
		if f.names[0] == name {
			return f.ctx, f.ctx != nil
		}
	}
	return nil, false
}

func (s *state) ctxPath(p *path) (any, bool) {
	if p.dataRoot {
		v, ok, _ := s.ctxParts(rootCtx, p.parts[1:])
		if !ok {
			return nil, false
		}
		return v, true
	}
	// raymond's evalDepthPath: try the context at depth, then its parents
	// until one resolves at least the first part.
	for i := len(s.ctx) - 1 - p.depth; i >= 0; i-- {
		v, ok, resolved := s.ctxParts(s.ctx[i], p.parts)
		if v != nil || resolved {
			return v, ok
		}
	}
	return nil, false
}

// ctxParts is raymond's evalCtxPath: in an array context the path is
// resolved in each element and the values found are collected.
func (s *state) ctxParts(c any, parts []string) (v any, ok, resolved bool) {
	switch x := c.(type) {
	case []any:
		return s.project(x, nil, parts), true, false
	case map[string]any, rootT, *bpCtx:
	default:
		if rv := reflect.ValueOf(c); rv.Kind() == reflect.Slice || rv.Kind() == reflect.Array {
			return s.project(nil, &rv, parts), true, false
		}
	}
	v, ok = c, true
	for _, part := range parts {
		if v, ok = fieldOf(v, part, s.d); !ok {
			return nil, false, resolved
		}
		resolved = true
	}
	if _, isRoot := v.(rootT); isRoot && len(parts) > 0 {
		v = s.rootMap() // a field holding the root is impossible; keep types honest
	}
	return v, ok, resolved
}

// project resolves parts in each element of an array context. The result is
// a []any, possibly empty, never a nil interface (raymond's quirk). Each
// element costs a step, so that a template looking many paths up in a
// large array is bounded by Options.MaxSteps like a loop over it.
func (s *state) project(x []any, rv *reflect.Value, parts []string) any {
	var out []any
	n := len(x)
	if rv != nil {
		n = rv.Len()
	}
	s.steps -= n
	for i := 0; i < n; i++ {
		var e any
		if rv != nil {
			if ev := rv.Index(i); ev.CanInterface() {
				e = ev.Interface()
			}
		} else {
			e = x[i]
		}
		v, ok := e, true
		for _, part := range parts {
			if v, ok = fieldOf(v, part, s.d); !ok {
				break
			}
		}
		if ok {
			out = append(out, v)
		}
	}
	return out
}

// dataPath is raymond's evalDataPathExpression: the data frame depth levels
// up, then the parts in it.
func (s *state) dataPath(p *path) (any, bool) {
	fi := len(s.frames) - 1 - p.depth
	if fi < 0 || len(p.parts) == 0 {
		return nil, false
	}
	f := &s.frames[fi]
	if !f.iter {
		return nil, false
	}
	var v any
	switch p.parts[0] {
	case "index":
		v = f.index
	case "key":
		v = f.key
	case "first":
		v = f.index == 0
	case "last":
		v = f.index == f.length-1
	default:
		return nil, false
	}
	ok := true
	for _, part := range p.parts[1:] {
		if v, ok = fieldOf(v, part, s.d); !ok {
			return nil, false
		}
	}
	return v, true
}
