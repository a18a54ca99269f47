package program

import (
	"context"
	"reflect"
	"sync"
)

// frame is one data frame of handlebars.js (the @index, @key, @first and
// @last of an iteration); frames[0] is the root frame, which holds only
// @root.
type frame struct {
	iter   bool
	index  int
	length int
	key    any // the index for arrays, as in handlebars.js
}

// bpFrame is one set of block parameters: names[0] names the context,
// names[1] the key or index ({{#each}} only; nil otherwise), any further
// name nothing.
type bpFrame struct {
	names []string
	ctx   any
	key   any
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
	// cur is the current context (handlebars.js's depth0); ctx holds the
	// contexts ../ reaches (its depths, innermost last), which grow only
	// when a block changes the context to a value not == the last one.
	cur    any
	ctx    []any
	frames []frame
	bps    []bpFrame
	args   []any
	keys   []string
	// seen holds, per path number (expr.missing), the render (epoch) that
	// last noted the path in d.Missing, so that nothing is cleared per
	// render.
	seen  []uint32
	epoch uint32
	// part is the state of partial calls (partial_eval.go).
	part partialState
	// quiet is positive while a partial block renders as a value, whose
	// absent paths are not noted in Data.Missing.
	quiet int
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
	s.cur = rootCtx
	s.ctx = append(s.ctx[:0], rootCtx)
	s.frames = append(s.frames[:0], frame{})
	s.bps = s.bps[:0]
	s.args = s.args[:0]
	s.keys = s.keys[:0]
	if n := seenSize(p, d); len(s.seen) < n {
		s.seen = make([]uint32, n)
	}
	s.part.reset(p.paths)
	if s.epoch++; s.epoch == 0 { // wrapped: forget every epoch
		clear(s.seen)
		s.epoch = 1
	}
	return s
}

func putState(s *state) {
	s.call, s.p, s.d, s.out, s.cur = nil, nil, nil, nil, nil
	clear(s.ctx[:cap(s.ctx)])
	clear(s.bps[:cap(s.bps)])
	clear(s.args[:cap(s.args)])
	clear(s.frames[:cap(s.frames)])
	s.part.reset(0)
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
		case opPartial:
			if err := s.partial(o.part); err != nil {
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
		v, found = s.field(e.field)
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
	case Raw:
		return s.writeString(string(x), false)
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
	if s.quiet > 0 {
		return
	}
	i := s.part.base + e.missing
	if s.seen[i] == s.epoch {
		return
	}
	s.seen[i] = s.epoch
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
		v, _ := s.field(e.field)
		return v, nil
	}
	switch e.kind {
	case exCustom:
		return s.custom(e, nil)
	case exPartialBlock:
		return s.partialBlockValue()
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
	switch e.helper {
	case hLog:
		if f := s.p.opts.Log; f != nil {
			f(args)
		}
		return nil, nil
	case hLookup:
		return s.lookup(args[0], args[1])
	}
	v, err := helperTable[e.helper].fn(args)
	if err != nil {
		return nil, &RenderError{Msg: "helper " + e.orig, Err: err}
	}
	return v, nil
}

// block runs a block statement as handlebars.js does.
func (s *state) block(b *block) error {
	e := b.e
	if e.kind == exCustom {
		return s.customBlock(b)
	}
	if e.kind != exHelper {
		// handlebars.js's blockHelperMissing: nil and false render the
		// inverse, true the block in the same context, an array each of
		// its elements (the inverse when empty), anything else ("", 0 and
		// {} included) the block with that value as its context.
		v, err := s.eval(e)
		if err != nil {
			return err
		}
		if b.subject != nil && isNull(v) {
			s.noteAbsent(b.subject) // looked up again only when it may be absent
		}
		switch {
		case isNull(v) || v == false:
			return s.runInverse(b)
		case v == true:
			return s.fnThis(b.body)
		case isArray(v):
			if n, err := s.each(b.body, v); err != nil || n > 0 {
				return err
			}
			return s.runInverse(b)
		}
		return s.fnWith(b.body, v)
	}
	switch e.helper {
	case hIf, hUnless, hWith, hEach, hEqual: // the block helpers, below
	default: // postroom's own helpers: the block renders when the value is truthy
		v, err := s.eval(e)
		if err != nil {
			return err
		}
		if Truthy(v) {
			return s.fnThis(b.body)
		}
		return s.runInverse(b)
	}
	c, c2, iz, err := s.blockArgs(e)
	if err != nil {
		return err
	}
	if b.subject != nil && isNull(c) {
		s.noteAbsent(b.subject) // looked up again only when it may be absent
	}
	switch e.helper {
	case hIf, hUnless:
		t := Truthy(c) || (jsTruthy(iz) && isZero(c))
		if e.helper == hUnless {
			t = !t
		}
		if t {
			return s.fnThis(b.body)
		}
		return s.runInverse(b)
	case hWith:
		if !notEmpty(c) {
			return s.runInverse(b)
		}
		return s.fnWith(b.body, c)
	case hEach:
		if isObject(c) {
			if n, err := s.each(b.body, c); err != nil || n > 0 {
				return err
			}
		}
		return s.runInverse(b)
	}
	// hEqual, raymond's: the block when the string forms are equal.
	a, c := s.valueOf(c), s.valueOf(c2)
	if err := s.chargeArgs(a, c); err != nil {
		return err
	}
	eq, err := equal(a, c, false)
	if err != nil {
		return &RenderError{Msg: "helper equal", Err: err}
	}
	if eq {
		return s.fnThis(b.body)
	}
	return nil // raymond's equal never renders its inverse
}

// blockArgs evaluates the arguments of the block helpers (if, unless, with
// and each take one, equal two), then their hash values, for their errors
// and side effects. It returns the value of includeZero (the last one, as
// in a JavaScript object literal). b is nil for the helpers of one
// argument.
func (s *state) blockArgs(e *expr) (a, b, includeZero any, err error) {
	if a, err = s.eval(e.args[0]); err != nil {
		return nil, nil, nil, err
	}
	if len(e.args) > 1 {
		if b, err = s.eval(e.args[1]); err != nil {
			return nil, nil, nil, err
		}
	}
	for i, h := range e.hash {
		v, err := s.eval(h)
		if err != nil {
			return nil, nil, nil, err
		}
		if e.hashKeys[i] == "includeZero" {
			includeZero = v
		}
	}
	return a, b, includeZero, nil
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
		case *Object:
			s.steps -= x.Len()
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

// runInverse is options.inverse(this).
func (s *state) runInverse(b *block) error { return s.fnThis(b.inverse) }

// field is a literal in helper position ({{"x"}}, {{1}}): handlebars.js
// reads it as a path of one segment.
func (s *state) field(name string) (any, bool) {
	if name == "" {
		return s.cur, true // {{""}} names the context itself
	}
	if !scopedID(name) && s.hasBlockParam(name) {
		return s.blockParam(name)
	}
	if s.cur == nil {
		return nil, false
	}
	return fieldOf(s.cur, name, s.d)
}

// lookup is handlebars.js's lookup helper: obj itself when it is falsy,
// else its own property named by the string form of field.
func (s *state) lookup(obj, field any) (any, error) {
	if !jsTruthy(obj) {
		return obj, nil
	}
	name, err := Str(field)
	if err != nil {
		return nil, &RenderError{Msg: "helper lookup", Err: err}
	}
	v, _ := fieldOf(obj, name, s.d)
	return v, nil
}

// fnThis is handlebars.js's options.fn(this) or options.inverse(this): p
// in the same context, or, when the context is nil, in handlebars.js's
// nullContext, an empty object.
func (s *state) fnThis(p *prog) error {
	if p == nil {
		return nil
	}
	if s.cur != nil && len(p.params) == 0 {
		return s.run(p)
	}
	ctx := s.cur
	if ctx == nil {
		ctx = nullCtx
	}
	saved := s.enter(p, ctx, bpFrame{ctx: ctx})
	err := s.run(p)
	s.leave(p, saved)
	return err
}

// fnWith is handlebars.js's options.fn(ctx) with ctx as the block's
// parameter: p in context ctx.
func (s *state) fnWith(p *prog, ctx any) error {
	if p == nil {
		return nil
	}
	saved := s.enter(p, ctx, bpFrame{ctx: ctx})
	err := s.run(p)
	s.leave(p, saved)
	return err
}

// saved is what enter changed, for leave to restore.
type saved struct {
	cur    any
	pushed bool
}

// enter makes ctx the current context, adds it to the contexts ../ reaches
// unless it is == the last of them (handlebars.js's wrapProgram), and, when
// p declares block parameters, pushes bp with p's names; leave undoes it.
func (s *state) enter(p *prog, ctx any, bp bpFrame) saved {
	if len(p.params) > 0 {
		bp.names = p.params
		s.bps = append(s.bps, bp)
	}
	sv := saved{cur: s.cur}
	s.cur = ctx
	top := s.ctx[len(s.ctx)-1]
	if !(ctx == nullCtx && top == nil) && !looseEqual(ctx, top) {
		s.ctx = append(s.ctx, ctx)
		sv.pushed = true
	}
	return sv
}

func (s *state) leave(p *prog, sv saved) {
	s.cur = sv.cur
	if sv.pushed {
		s.ctx[len(s.ctx)-1] = nil
		s.ctx = s.ctx[:len(s.ctx)-1]
	}
	if len(p.params) > 0 {
		s.bps[len(s.bps)-1] = bpFrame{}
		s.bps = s.bps[:len(s.bps)-1]
	}
}
