package program

import (
	"cmp"
	"context"
	"fmt"
	"reflect"
	"slices"
	"sync"
)

// frame is one private data frame of raymond (the @index, @key, @first and
// @last of an iteration); frames[0] is the empty root frame.
type frame struct {
	iter   bool
	index  int
	length int
	key    any // nil for arrays, as in raymond
}

// bpFrame is one set of block parameters: params[0] names the context,
// params[1] the key when the block gives one.
type bpFrame struct {
	names  []string
	ctx    any
	key    any
	hasKey bool
}

// state is the per-render evaluation state; pooled.
type state struct {
	call   context.Context // the caller's, checked every ctxEvery steps
	p      *Program
	d      *Data
	out    []byte
	start  int
	max    int  // the length out may reach (see Program.limit)
	budget bool // max is set by d's budget
	steps  int  // remaining
	html   bool
	ctx    []any
	frames []frame
	bps    []bpFrame
	args   []any
	keys   []string
	bp     bpCtx
	// seen holds, per path number (expr.missing), the render (epoch) that
	// last noted the path in d.Missing, so that nothing is cleared per
	// render.
	seen  []uint32
	epoch uint32
}

var statePool = sync.Pool{New: func() any { return new(state) }}

func getState(ctx context.Context, p *Program, d *Data, dst []byte) *state {
	s := statePool.Get().(*state)
	s.call, s.p, s.d, s.out, s.start = ctx, p, d, dst, len(dst)
	s.max, s.budget = p.limit(len(dst), d)
	s.steps = p.opts.MaxSteps
	if s.steps <= 0 {
		s.steps = int(^uint(0) >> 1)
	}
	s.html = p.opts.Mode == HTML
	s.ctx = append(s.ctx[:0], rootCtx)
	s.frames = append(s.frames[:0], frame{})
	s.bps = s.bps[:0]
	s.args = s.args[:0]
	s.keys = s.keys[:0]
	if len(s.seen) < p.paths {
		s.seen = make([]uint32, p.paths)
	}
	if s.epoch++; s.epoch == 0 { // wrapped: forget every epoch
		clear(s.seen)
		s.epoch = 1
	}
	return s
}

func putState(s *state) {
	s.call, s.p, s.d, s.out = nil, nil, nil, nil
	clear(s.ctx[:cap(s.ctx)])
	clear(s.bps[:cap(s.bps)])
	clear(s.args[:cap(s.args)])
	clear(s.frames[:cap(s.frames)])
	s.bp = bpCtx{}
	if cap(s.ctx) > 1024 || cap(s.args) > 1024 || cap(s.keys) > 1024 || cap(s.frames) > 1024 || cap(s.seen) > 1<<16 {
		return // do not keep what a hostile render grew
	}
	statePool.Put(s)
}

// ctxEvery is how often, in steps, a render checks its context: a power
// of two minus one, as a mask of the remaining steps.
const ctxEvery = 1<<10 - 1

// step counts one step. It is small enough to be inlined; the checks it
// rarely needs are in stepCheck.
func (s *state) step() error {
	s.steps--
	if s.steps&ctxEvery == 0 || s.steps < 0 {
		return s.stepCheck()
	}
	return nil
}

// stepCheck fails when the steps are spent, or ctx is done.
func (s *state) stepCheck() error {
	if s.steps < 0 {
		return &RenderError{Err: ErrTooManySteps}
	}
	if err := s.call.Err(); err != nil {
		return &RenderError{Err: err}
	}
	return nil
}

func (s *state) checkOut() error {
	if len(s.out) > s.max {
		return tooLarge(s.budget)
	}
	return nil
}

// escChunk is how much of a string is escaped between two checks of the
// output bound: escaping may grow it up to 6 times.
const escChunk = 4096

// grow makes room for n more bytes of output. It doubles the capacity, as
// append does for small buffers (for large ones append grows by a quarter,
// which allocates about five times the final size along the way), but not
// beyond the output bound.
func (s *state) grow(n int) {
	if cap(s.out)-len(s.out) >= n {
		return
	}
	c := max(2*cap(s.out), len(s.out)+n)
	if c > s.max {
		c = max(s.max, len(s.out)+n)
	}
	out := make([]byte, len(s.out), c)
	copy(out, s.out)
	s.out = out
}

// writeString appends x, escaped when esc, stopping before the output
// exceeds its bound.
func (s *state) writeString(x string, esc bool) error {
	for {
		if len(x) > s.max-len(s.out) {
			return tooLarge(s.budget) // escaping never shrinks
		}
		s.grow(min(len(x), escChunk))
		if !esc || len(x) <= escChunk {
			s.out = appendString(s.out, x, esc)
			return s.checkOut()
		}
		s.out = appendEscaped(s.out, x[:escChunk])
		x = x[escChunk:]
	}
}

// run executes the instructions of p.
func (s *state) run(p *prog) error {
	for i := range p.ops {
		o := &p.ops[i]
		if err := s.step(); err != nil {
			return err
		}
		switch o.kind {
		case opText:
			if n := len(o.text); n > cap(s.out)-len(s.out) || n > s.max-len(s.out) {
				if n > s.max-len(s.out) {
					return tooLarge(s.budget)
				}
				s.grow(n)
			}
			s.out = append(s.out, o.text...)
		case opValue:
			if err := s.value(o); err != nil {
				return err
			}
		case opBlock:
			if err := s.block(o.blk); err != nil {
				return err
			}
		}
		if err := s.checkOut(); err != nil {
			return err
		}
	}
	return nil
}

// value writes the value of an output mustache.
func (s *state) value(o *op) error {
	e := o.e
	var v any
	switch e.kind {
	case exPath:
		var found bool
		v, found = s.path(e.path)
		if !found {
			s.missing(e)
		}
	case exField:
		var found bool
		v, found = fieldOf(s.ctx[len(s.ctx)-1], e.field, s.d)
		if !found {
			s.missing(e)
		}
	default:
		var err error
		if v, err = s.eval(e); err != nil {
			return err
		}
	}
	return s.write(v, o.esc)
}

func (s *state) write(v any, esc bool) error {
	switch x := v.(type) {
	case string:
		if n := len(x); n <= escChunk && n <= s.max-len(s.out) && n <= cap(s.out)-len(s.out) {
			// The common case, inline: run checks the bound after the op.
			s.out = appendString(s.out, x, esc)
			return nil
		}
		return s.writeString(x, esc)
	case nil:
		return nil
	case rootT:
		v = s.rootMap()
	}
	var err error
	s.out, err = appendStr(s.out, v, esc, 0, &s.steps)
	if err != nil {
		return &RenderError{Msg: "cannot print value", Err: err}
	}
	if s.steps < 0 {
		return &RenderError{Err: ErrTooManySteps}
	}
	return nil
}

// missing notes e's path in d.Missing, once per render.
func (s *state) missing(e *expr) {
	if s.seen[e.missing] == s.epoch {
		return
	}
	s.seen[e.missing] = s.epoch
	s.d.Missing = append(s.d.Missing, e.orig)
}

// rootMap materializes the root context as raymond sees it: Globals
// overridden by Params. Only needed when the root itself is used as a value.
func (s *state) rootMap() map[string]any {
	s.steps -= len(s.d.Params) + len(s.d.Globals) // a copy per use: charged
	m := make(map[string]any, len(s.d.Params)+len(s.d.Globals))
	for k, v := range s.d.Globals {
		m[k] = v
	}
	for k, v := range s.d.Params {
		m[k] = v
	}
	return m
}

// valueOf turns the root context into a map before it leaves the evaluator
// as a value (a helper argument, an each target).
func (s *state) valueOf(v any) any {
	if _, ok := v.(rootT); ok {
		return s.rootMap()
	}
	return v
}

// eval evaluates an expression used as a value: a helper argument or the
// target of a block.
func (s *state) eval(e *expr) (any, error) {
	switch e.kind {
	case exPath:
		v, _ := s.path(e.path)
		return v, nil
	case exLit:
		return e.lit, nil
	case exField:
		v, _ := fieldOf(s.ctx[len(s.ctx)-1], e.field, s.d)
		return v, nil
	}
	base := len(s.args)
	defer func() { clear(s.args[base:]); s.args = s.args[:base] }()
	for _, a := range e.args {
		v, err := s.eval(a)
		if err != nil {
			return nil, err
		}
		s.args = append(s.args, s.valueOf(v))
	}
	for _, h := range e.hash {
		if _, err := s.eval(h); err != nil {
			return nil, err
		}
	}
	args := s.args[base:]
	switch e.helper {
	case hLookup, hLength, hDefault, hAnd, hOr, hNot: // constant time
	default:
		if err := s.chargeArgs(args...); err != nil {
			return nil, err
		}
	}
	if e.helper == hLog {
		if f := s.p.opts.Log; f != nil {
			f([]any{args[0]})
		}
		return "", nil
	}
	v, err := helperTable[e.helper].fn(args)
	if err != nil {
		return nil, &RenderError{Msg: "helper " + e.orig, Err: err}
	}
	return v, nil
}

// block runs a block statement.
func (s *state) block(b *block) error {
	e := b.e
	if e.kind != exHelper {
		v, err := s.eval(e)
		if err != nil {
			return err
		}
		if !Truthy(v) && !isRootTruthy(s, v) {
			return s.runInverse(b)
		}
		if b.body == nil {
			return nil
		}
		if v, ok := v.([]any); ok {
			return s.eachSlice(b.body, v)
		}
		if rv := reflect.ValueOf(v); rv.Kind() == reflect.Slice || rv.Kind() == reflect.Array {
			return s.eachReflectSlice(b.body, rv)
		}
		return s.fn(b.body, v)
	}
	switch e.helper {
	case hIf, hUnless, hWith, hEach, hEqual:
	default:
		v, err := s.eval(e)
		if err != nil {
			return err
		}
		if Truthy(v) {
			return s.fn(b.body, nil)
		}
		return s.runInverse(b)
	}
	args, iz, err := s.blockArgs(e)
	if err != nil {
		return err
	}
	c := args[0]
	switch e.helper {
	case hIf, hUnless:
		zero := false
		if b, ok := iz.(bool); ok && b {
			n, ok := c.(int)
			zero = ok && n == 0
		}
		t := zero || Truthy(c) || isRootTruthy(s, c)
		if e.helper == hUnless {
			t = !t
		}
		if t {
			return s.fn(b.body, nil)
		}
		return s.runInverse(b)
	case hWith:
		if !Truthy(c) && !isRootTruthy(s, c) {
			return s.runInverse(b)
		}
		return s.fn(b.body, c)
	case hEach:
		c = s.valueOf(c)
		if !Truthy(c) {
			return s.runInverse(b)
		}
		return s.each(b.body, c)
	}
	// hEqual
	a, c := s.valueOf(args[0]), s.valueOf(args[1])
	if err := s.chargeArgs(a, c); err != nil {
		return err
	}
	eq, err := equal(a, c, false)
	if err != nil {
		return &RenderError{Msg: "helper equal", Err: err}
	}
	if eq {
		return s.fn(b.body, nil)
	}
	return nil
}

// blockArgs evaluates the arguments of raymond's block helpers (if, unless,
// with and each take one, equal two), then their hash values, for their
// errors and side effects, as raymond does before calling the helper. It
// returns the value of includeZero (the last non-nil one, as in raymond's
// hash map).
func (s *state) blockArgs(e *expr) (args [2]any, includeZero any, err error) {
	for i, a := range e.args {
		if args[i], err = s.eval(a); err != nil {
			return args, nil, err
		}
	}
	for i, h := range e.hash {
		v, err := s.eval(h)
		if err != nil {
			return args, nil, err
		}
		if v != nil && e.hashKeys[i] == "includeZero" {
			includeZero = v
		}
	}
	return args, includeZero, nil
}

// chargeArgs charges the steps of a helper that prints or compares its
// arguments: one per element of an array or map, one per KiB of a string,
// so that helpers over large values are bounded by Options.MaxSteps like
// loops over them ({{#if (eq s s)}} on an 8 MiB s compares 8 MiB).
func (s *state) chargeArgs(args ...any) error {
	for _, v := range args {
		switch x := v.(type) {
		case nil, bool, float64, int:
		case string:
			s.steps -= len(x) >> 10
		case []any:
			s.steps -= len(x)
		case map[string]any:
			s.steps -= len(x)
		default:
			switch rv := reflect.ValueOf(v); rv.Kind() {
			case reflect.String:
				s.steps -= rv.Len() >> 10
			case reflect.Array, reflect.Slice, reflect.Map:
				s.steps -= rv.Len()
			}
		}
	}
	if s.steps < 0 {
		return &RenderError{Err: ErrTooManySteps}
	}
	return nil
}

func isRootTruthy(s *state, v any) bool {
	if _, ok := v.(rootT); ok {
		return len(s.d.Params) > 0 || len(s.d.Globals) > 0
	}
	return false
}

func (s *state) runInverse(b *block) error {
	if b.inverse == nil {
		return nil
	}
	return s.run(b.inverse)
}

// fn is raymond's evalProgram without a data frame: push ctx unless nil,
// bind the first block parameter to it, run p.
func (s *state) fn(p *prog, ctx any) error {
	if p == nil {
		return nil
	}
	s.enter(p, ctx, bpFrame{ctx: ctx})
	err := s.run(p)
	s.leave(p, ctx)
	return err
}

// enter pushes ctx (unless nil) and, when p declares block parameters, bp
// with p's names; leave pops what enter pushed.
func (s *state) enter(p *prog, ctx any, bp bpFrame) {
	if len(p.params) > 0 {
		bp.names = p.params
		s.bps = append(s.bps, bp)
	}
	if ctx != nil {
		s.ctx = append(s.ctx, ctx)
	}
}

func (s *state) leave(p *prog, ctx any) {
	if ctx != nil {
		s.ctx[len(s.ctx)-1] = nil
		s.ctx = s.ctx[:len(s.ctx)-1]
	}
	if len(p.params) > 0 {
		s.bps[len(s.bps)-1] = bpFrame{}
		s.bps = s.bps[:len(s.bps)-1]
	}
}

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
