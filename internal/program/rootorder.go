package program

import (
	"slices"
)

// The root context's keys in handlebars.js's order, for {{#each}} over it
// and a partial's hash over it (see Data.ParamsOrder).

// rootKeys appends the keys of the root context, Data.Params over
// Data.Globals, to s.keys in the order in which JavaScript enumerates
// Object.assign({}, globals, params) built from JSON in the orders of
// Data.GlobalsOrder and Data.ParamsOrder, and returns them (a slice of
// s.keys, which the caller truncates when done). When neither has an
// order (parameters built in Go), the keys are sorted as those of one Go
// map. It charges a step per key, as materializing the root does.
func (s *state) rootKeys() []string {
	d := s.d
	s.steps -= len(d.Params) + len(d.Globals)
	base := len(s.keys)
	if d.GlobalsOrder == nil && d.ParamsOrder == nil {
		// Neither was decoded: one Go map, as the keys have always been
		// visited, sorted.
		s.keys = appendOrdered(s.keys, d.Globals, nil, d.Params)
		s.keys = appendOrdered(s.keys, d.Params, nil, nil)
		keys := s.keys[base:]
		slices.SortFunc(keys, compareJSKeys)
		return keys
	}
	s.keys = appendOrdered(s.keys, d.Globals, d.GlobalsOrder, nil)
	s.keys = appendOrdered(s.keys, d.Params, d.ParamsOrder, d.Globals)
	keys := s.keys[base:]
	// JavaScript's property order: array indexes first, in numeric order,
	// then the other keys in order of insertion. A stable sort keeps it.
	for _, k := range keys {
		if _, ok := arrayIndex(k); ok {
			slices.SortStableFunc(keys, compareIndexKeys)
			break
		}
	}
	return keys
}

// compareIndexKeys orders array indexes first, in numeric order, and
// leaves the other keys as they are.
func compareIndexKeys(a, b string) int {
	ia, oka := arrayIndex(a)
	ib, okb := arrayIndex(b)
	switch {
	case oka && okb:
		return ia - ib
	case oka:
		return -1
	case okb:
		return 1
	}
	return 0
}

// appendOrdered appends to keys the keys of m that skip (the globals,
// whose places the params' keys keep) does not have: first those of order
// that m has, in that order, each once, then the others sorted (the keys
// a caller added after decoding, or all of them when m was not decoded).
func appendOrdered(keys []string, m map[string]any, order []string, skip map[string]any) []string {
	if len(m) == 0 {
		return keys
	}
	var seen map[string]bool
	if len(order) > 0 {
		seen = make(map[string]bool, len(m))
	}
	for _, k := range order {
		if _, ok := m[k]; !ok || seen[k] {
			continue
		}
		seen[k] = true
		if _, ok := skip[k]; !ok {
			keys = append(keys, k)
		}
	}
	rest := len(keys)
	for k := range m {
		if _, ok := skip[k]; !ok && !seen[k] {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys[rest:], compareJSKeys)
	return keys
}

// eachRoot is each over the root context, in rootKeys's order.
func (s *state) eachRoot(p *prog) (int, error) {
	base := len(s.keys)
	keys := s.rootKeys()
	defer func() { s.keys = s.keys[:base] }()
	if s.steps < 0 {
		return 0, &RenderError{Err: ErrTooManySteps}
	}
	for i := range keys {
		k := s.keys[base+i]
		v, _ := fieldOf(rootCtx, k, s.d)
		if err := s.iter(p, v, frame{iter: true, index: i, length: len(keys), key: k}); err != nil {
			return i, err
		}
	}
	return len(keys), nil
}
