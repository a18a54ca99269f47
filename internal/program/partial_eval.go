package program

import (
	"bytes"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
)

// Partials, render side: the call's table, and the evaluation of partial
// calls, partial blocks and inline partials with handlebars.js 4.7's
// scoping (runtime.js invokePartial and resolvePartial, decorators/inline.js).

// MaxPartialNesting is the deepest nesting of partial calls a render
// accepts, whatever the caller checked before (an inline partial may call
// itself): deeper is a render error, never a stack overflow.
const MaxPartialNesting = 64

// Partials is one call's table of partials, by mode and name: the Programs
// that {{> name}} renders, each compiled in the mode of the template that
// calls it. Build it with Add before any render; afterwards it is read-only
// and safe for concurrent use by any number of renders. The zero value is
// an empty table; a nil *Partials is one too.
type Partials struct {
	byMode [2]map[string]partialEntry // [HTML-1], [Text-1]
	// paths counts the output paths of every Program added, so that each
	// has its own range of Data.Missing's bookkeeping.
	paths int
}

type partialEntry struct {
	p    *Program
	base int // offset of p's path numbers past the calling Program's
}

// Add makes p the partial name for templates of p's mode, replacing any
// earlier one. Add must not be called once a render uses t.
func (t *Partials) Add(name string, p *Program) {
	i := p.opts.Mode - 1
	if t.byMode[i] == nil {
		t.byMode[i] = map[string]partialEntry{}
	}
	t.byMode[i][name] = partialEntry{p: p, base: t.paths}
	t.paths += p.paths
}

// Lookup returns the partial name of mode, if t has one.
func (t *Partials) Lookup(name string, mode Mode) (*Program, bool) {
	if t == nil || mode != HTML && mode != Text {
		return nil, false
	}
	e, ok := t.byMode[mode-1][name]
	return e.p, ok
}

// partialState is the part of a render's state that partials use.
type partialState struct {
	// base is the offset of the running program's path numbers in
	// state.seen; top is where the table's ranges start (the top-level
	// Program's path count).
	base, top int
	depth     int // partial calls nested
	// inlines are the inline partials in scope, innermost last.
	inlines []inlineRef
	// blocks are the partial blocks of the calls in progress; cur is the
	// index + 1 of the one {{> @partial-block}} renders, 0 for none.
	blocks []partialBlock
	cur    int
}

// inlineRef is an inline partial in scope, with the path base of the
// program that defines it.
type inlineRef struct {
	name string
	body *prog
	base int
}

// partialBlock is the content of a partial block, with what it closes
// over where it was written: the context stack, the block parameters, the
// path base and the partial block that was current there.
type partialBlock struct {
	body  *prog
	ctx   []any
	bps   []bpFrame
	base  int
	outer int
}

// reset prepares the partial state for a render of a Program of top
// output paths.
func (ps *partialState) reset(top int) {
	clear(ps.inlines[:cap(ps.inlines)])
	clear(ps.blocks[:cap(ps.blocks)])
	*ps = partialState{top: top, inlines: ps.inlines[:0], blocks: ps.blocks[:0]}
}

// seenSize is the size of state.seen a render of p with d needs.
func seenSize(p *Program, d *Data) int {
	if d.Partials == nil {
		return p.paths
	}
	return p.paths + d.Partials.paths
}

// partial runs an opPartial.
func (s *state) partial(pc *partialOp) error {
	switch pc.kind {
	case partScope:
		n := len(s.part.inlines)
		for _, d := range pc.defs {
			s.part.inlines = append(s.part.inlines, inlineRef{name: d.name, body: d.body, base: s.part.base})
		}
		err := s.run(pc.body)
		clear(s.part.inlines[n:])
		s.part.inlines = s.part.inlines[:n]
		return err
	case partBlock:
		return s.runPartialBlock(pc)
	}
	body, base, found := s.resolve(pc.name)
	if !found && pc.body == nil {
		return &RenderError{Msg: fmt.Sprintf("partial %q not found", pc.name)}
	}
	c, err := s.partialContext(pc)
	if err != nil {
		return err
	}
	start := len(s.out)
	outerCur := s.part.cur
	nInline := len(s.part.inlines)
	if pc.body != nil {
		// {{#> name}}body{{/name}}: body becomes the partial block, and
		// the inline partials it defines are in scope for the partial
		// (handlebars.js: options.partials extended with fn.partials).
		s.part.blocks = append(s.part.blocks, partialBlock{body: pc.body, ctx: s.ctx, bps: s.bps, base: s.part.base, outer: s.part.cur})
		s.part.cur = len(s.part.blocks)
		for _, d := range pc.body.defs {
			s.part.inlines = append(s.part.inlines, inlineRef{name: d.name, body: d.body, base: s.part.base})
		}
		if !found {
			// A missing partial renders its block, as @partial-block would.
			err = s.runBlockContent(s.part.cur, c)
		}
	}
	if found {
		err = s.runPartial(body, base, c)
	}
	if pc.body != nil {
		b := len(s.part.blocks) - 1
		s.part.blocks[b] = partialBlock{}
		s.part.blocks = s.part.blocks[:b]
		clear(s.part.inlines[nInline:])
		s.part.inlines = s.part.inlines[:nInline]
	}
	s.part.cur = outerCur
	if err != nil {
		return err
	}
	if pc.indent != "" {
		return s.indent(start, pc.indent)
	}
	return nil
}

// resolve finds partial name: the innermost inline partial of that name
// in scope, else the call's table.
func (s *state) resolve(name string) (body *prog, base int, ok bool) {
	for i := len(s.part.inlines) - 1; i >= 0; i-- {
		if r := &s.part.inlines[i]; r.name == name {
			return r.body, r.base, true
		}
	}
	if t := s.d.Partials; t != nil {
		if e, ok := t.byMode[s.p.opts.Mode-1][name]; ok {
			return e.p.body, s.part.top + e.base, true
		}
	}
	return nil, 0, false
}

// partialContext is the context a partial renders with: the context
// argument, or the current context, extended with the hash when there is
// one (handlebars.js: Utils.extend({}, context, options.hash)): an
// *Object of the context's members in the order {{#each}} visits them (a
// Go map's sorted, the root's as rootKeys orders them), then the hash's new keys, last
// to first, as handlebars.js builds its hash object.
func (s *state) partialContext(pc *partialOp) (any, error) {
	c := s.cur
	if pc.ctx != nil {
		v, err := s.eval(pc.ctx)
		if err != nil {
			return nil, err
		}
		c = v
	}
	if len(pc.hash) == 0 {
		return c, nil
	}
	var o objectBuilder
	if _, ok := c.(rootT); ok {
		base := len(s.keys)
		keys := s.rootKeys()
		if s.steps < 0 {
			s.keys = s.keys[:base]
			return nil, &RenderError{Err: ErrTooManySteps}
		}
		o.members = slices.Grow(o.members, len(keys)+len(pc.hash))
		for _, k := range keys {
			v, _ := fieldOf(rootCtx, k, s.d)
			o.set(k, v)
		}
		s.keys = s.keys[:base]
		c = nil // done: the switch below adds nothing
	}
	switch x := s.valueOf(c).(type) {
	case *Object:
		s.steps -= x.Len()
		o.members = slices.Grow(o.members, x.Len()+len(pc.hash))
		for _, m := range x.members {
			o.set(m.key, m.val)
		}
	case map[string]any:
		s.steps -= len(x)
		for _, k := range slices.SortedFunc(maps.Keys(x), compareJSKeys) {
			o.set(k, x[k])
		}
	case string:
		// for..in over a string: its characters by index, in UTF-16 code
		// units as stringField reads them.
		n, _ := stringField(x, "length")
		if s.steps -= n.(int); s.steps < 0 {
			return nil, &RenderError{Err: ErrTooManySteps}
		}
		for i := range n.(int) {
			k := strconv.Itoa(i)
			v, _ := stringField(x, k)
			o.set(k, v)
		}
	case []any:
		if s.steps -= len(x); s.steps < 0 {
			return nil, &RenderError{Err: ErrTooManySteps}
		}
		for i, v := range x {
			o.set(strconv.Itoa(i), v)
		}
	default:
		// A Go map with string keys: its entries, sorted; a struct: its
		// fields by their encoding/json names, as it would be as a JSON
		// object; another slice or array: its elements by index. Other
		// values contribute nothing, as a JavaScript number or boolean
		// would.
		rv := reflect.ValueOf(x)
		for rv.Kind() == reflect.Pointer && !rv.IsNil() {
			rv = rv.Elem()
		}
		switch {
		case rv.Kind() == reflect.Map && rv.Type().Key().Kind() == reflect.String:
			s.steps -= rv.Len()
			keys := rv.MapKeys()
			slices.SortFunc(keys, func(a, b reflect.Value) int { return compareJSKeys(a.String(), b.String()) })
			for _, k := range keys {
				if v := rv.MapIndex(k); v.CanInterface() {
					o.set(k.String(), v.Interface())
				}
			}
		case (rv.Kind() == reflect.Slice || rv.Kind() == reflect.Array) && rv.IsValid():
			if s.steps -= rv.Len(); s.steps < 0 {
				return nil, &RenderError{Err: ErrTooManySteps}
			}
			for i := range rv.Len() {
				if v := rv.Index(i); v.CanInterface() {
					o.set(strconv.Itoa(i), v.Interface())
				}
			}
		case rv.Kind() == reflect.Struct && rv.Type() != timeType:
			for _, f := range jsonFields(rv.Type()) {
				s.steps--
				if fv, err := rv.FieldByIndexErr(f.index); err == nil && fv.CanInterface() {
					o.set(f.name, fv.Interface())
				}
			}
		}
	}
	// handlebars.js builds the hash with its pairs in reverse order: the
	// extended context has the new keys last to first, and of a key given
	// twice the first value.
	base0 := len(s.args)
	defer func() { clear(s.args[base0:]); s.args = s.args[:base0] }()
	for _, h := range pc.hash {
		v, err := s.eval(h)
		if err != nil {
			return nil, err
		}
		s.args = append(s.args, s.valueOf(v))
	}
	for i := len(pc.hash) - 1; i >= 0; i-- {
		o.set(pc.hashKeys[i], s.args[base0+i])
	}
	if err := s.step(); err != nil {
		return nil, err
	}
	return o.object(), nil
}

// stackRoom is the room made on the context and block parameter stacks
// before a partial starts its own past the caller's.
const stackRoom = 8

// runPartial renders body, a partial, with context c. As in handlebars.js
// without the compat option, the partial sees c alone: ../ finds nothing
// above it, and the caller's block parameters are out of scope; @index
// and the other data variables are the caller's.
func (s *state) runPartial(body *prog, base int, c any) error {
	if s.part.depth >= MaxPartialNesting {
		return &RenderError{Msg: fmt.Sprintf("partials nested deeper than %d", MaxPartialNesting)}
	}
	// The partial's stacks start past the caller's, in the same arrays,
	// grown first so that they keep the room for the next call: the
	// caller's entries stay as they are.
	s.ctx, s.bps = slices.Grow(s.ctx, stackRoom), slices.Grow(s.bps, stackRoom)
	outerCur, outerCtx, outerBps, outerBase := s.cur, s.ctx, s.bps, s.part.base
	s.cur = c
	s.ctx = append(s.ctx[len(s.ctx):], c)
	s.bps = s.bps[len(s.bps):]
	s.part.base = base
	s.part.depth++
	err := s.run(body)
	s.part.depth--
	clear(s.ctx)
	clear(s.bps)
	s.cur, s.ctx, s.bps, s.part.base = outerCur, outerCtx, outerBps, outerBase
	return err
}

// runPartialBlock runs {{> @partial-block [ctx] [k=v]}}.
func (s *state) runPartialBlock(pc *partialOp) error {
	if s.part.cur == 0 {
		return &RenderError{Msg: "partial @partial-block not found: no partial block is being rendered"}
	}
	c, err := s.partialContext(pc)
	if err != nil {
		return err
	}
	start := len(s.out)
	if err := s.runBlockContent(s.part.cur, c); err != nil {
		return err
	}
	if pc.indent != "" {
		return s.indent(start, pc.indent)
	}
	return nil
}

// partialBlockValue is @partial-block used as a value: nil when no
// partial block is being rendered, else the current one rendered as a
// string, as handlebars.js's if, unless, with and each helpers call the
// partialBlockWrapper function: with no context (the
// contexts and block parameters of where the block was written stay
// reachable through ../ and their names) and an empty data frame (no
// @root, @index or @key). Its absent paths do not count as missing.
func (s *state) partialBlockValue() (any, error) {
	if s.part.cur == 0 {
		return nil, nil
	}
	start, frames := len(s.out), s.frames
	s.frames = s.frames[len(s.frames):]
	s.quiet++
	err := s.runBlockContent(s.part.cur, nil)
	s.quiet--
	s.frames = frames
	v := string(s.out[start:])
	s.out = s.out[:start]
	return v, err
}

// runBlockContent renders partial block i (1-based) with context c: with
// the context stack and block parameters of where the block was written,
// c pushed onto them unless it is == their top (JavaScript's loose
// equality), and the partial block
// that was current there (handlebars.js: partialBlockWrapper).
func (s *state) runBlockContent(i int, c any) error {
	if s.part.depth >= MaxPartialNesting {
		return &RenderError{Msg: fmt.Sprintf("partials nested deeper than %d", MaxPartialNesting)}
	}
	pb := s.part.blocks[i-1]
	s.ctx, s.bps = slices.Grow(s.ctx, len(pb.ctx)+stackRoom), slices.Grow(s.bps, len(pb.bps)+stackRoom)
	outerCtx, outerBps, outerBase, outerCur, outerC := s.ctx, s.bps, s.part.base, s.part.cur, s.cur
	s.steps -= len(pb.ctx) + len(pb.bps)
	s.ctx = append(s.ctx[len(s.ctx):], pb.ctx...)
	if !looseEqual(c, pb.ctx[len(pb.ctx)-1]) {
		s.ctx = append(s.ctx, c)
	}
	s.cur = c
	s.bps = append(s.bps[len(s.bps):], pb.bps...)
	s.part.base, s.part.cur = pb.base, pb.outer
	s.part.depth++
	err := s.run(pb.body)
	s.part.depth--
	clear(s.ctx)
	clear(s.bps)
	s.ctx, s.bps, s.part.base, s.part.cur, s.cur = outerCtx, outerBps, outerBase, outerCur, outerC
	return err
}

// indent prefixes each line of s.out[start:] with ind, except an empty
// last one (handlebars.js: invokePartialWrapper with options.indent), in
// place, from the end backwards.
func (s *state) indent(start int, ind string) error {
	seg := s.out[start:]
	if len(seg) == 0 {
		return nil
	}
	lines := 1 + bytes.Count(seg[:len(seg)-1], []byte{'\n'})
	s.steps -= lines
	if s.steps < 0 {
		return &RenderError{Err: ErrTooManySteps}
	}
	add := lines * len(ind)
	if add > s.max-len(s.out) {
		return tooLarge(s.budget)
	}
	s.grow(add)
	r := len(s.out)
	s.out = s.out[:r+add]
	w := len(s.out)
	for r > start {
		ls := start + bytes.LastIndexByte(s.out[start:r-1], '\n') + 1
		w -= copy(s.out[w-(r-ls):w], s.out[ls:r])
		w -= copy(s.out[w-len(ind):w], ind)
		r = ls
	}
	return nil
}
