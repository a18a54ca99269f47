package program

import (
	"errors"
	"fmt"
	"slices"

	"github.com/aymerick/raymond/ast"
)

// Custom helpers: the helpers of Options.Helpers, bound at compile time
// (arity checked there) and called by the evaluator with their arguments
// evaluated.

// Helper is a helper the program's user registers in Options.Helpers under
// its name. Compile refuses a call with fewer than Min or more than Max
// positional arguments (Max < 0: no maximum), a hash when Hash is false,
// and a block ({{#name}}...{{/name}}) when Block is false. A Helper must
// not be modified once a Program uses it.
type Helper struct {
	Min, Max int
	Hash     bool
	Block    bool
	// Func computes the helper's value from c. It is called from the
	// goroutines that render, possibly from several at once, and must not
	// keep c. A returned error, or a panic, stops the render with a
	// *RenderError that wraps the error.
	Func func(c *HelperCall) (any, error)
}

// Raw is a string a helper returns to have it written as is, never
// HTML-escaped.
type Raw string

// HelperCall is one call of a Helper: its arguments, evaluated, and for a
// block helper, its block. It is valid during the call only.
type HelperCall struct {
	// Name is the helper's name as registered.
	Name string
	// Args are the positional arguments, as the data holds them (string,
	// float64, bool, nil, map[string]any, []any or other Go values).
	Args []any
	// Hash holds the hash arguments by key; nil when there are none.
	Hash map[string]any

	s    *state
	blk  *block
	done bool
}

// Block reports whether the helper was called as a block.
func (c *HelperCall) Block() bool { return c.blk != nil }

// Fn renders the block with ctx as its context (nil: the current context)
// and returns the output; "" when the helper was not called as a block.
// A block helper's value is written as is (never escaped), as
// handlebars.js writes it.
func (c *HelperCall) Fn(ctx any) (string, error) {
	if c.blk == nil {
		return "", nil
	}
	return c.render(c.blk.body, ctx)
}

// Inverse renders the block's {{else}} part like Fn.
func (c *HelperCall) Inverse(ctx any) (string, error) {
	if c.blk == nil {
		return "", nil
	}
	return c.render(c.blk.inverse, ctx)
}

func (c *HelperCall) render(p *prog, ctx any) (string, error) {
	if c.done {
		return "", fmt.Errorf("program: helper %s: block rendered after the call returned", c.Name)
	}
	if p == nil {
		return "", nil
	}
	s := c.s
	start := len(s.out)
	var err error
	if ctx == nil {
		err = s.fnThis(p)
	} else {
		err = s.fnWith(p, ctx)
	}
	out := string(s.out[start:])
	s.out = s.out[:start]
	return out, err
}

// customCall compiles a call of helper h.
func (c *compiler) customCall(n *ast.Expression, name string, h *Helper, pos position) (*expr, error) {
	switch {
	case pos == posBlock && !h.Block:
		return nil, c.errAt(n.Path, "helper %q cannot open a block", name)
	case len(n.Params) < h.Min || (h.Max >= 0 && len(n.Params) > h.Max):
		return nil, c.errAt(n.Path, "helper %q takes %s, not %d", name, helperSpec{min: h.Min, max: h.Max}.arity(), len(n.Params))
	case n.Hash != nil && !h.Hash:
		return nil, c.errAt(n.Hash, "helper %q takes no hash arguments (%s=...)", name, n.Hash.Pairs[0].Key)
	}
	return c.callArgs(&expr{kind: exCustom, custom: h, orig: name}, n)
}

// customHelper returns the custom helper an expression calls, if any: a
// registered name in helper position, called even with no arguments (it
// shadows a parameter of that name, as in handlebars.js; {{this.name}}
// reaches the parameter), unless a block parameter in scope has that name
// (handlebars.js: classifySexpr).
func (c *compiler) customHelper(n *ast.Expression) (string, *Helper) {
	name := n.HelperName()
	if name == "" {
		return "", nil
	}
	h, ok := c.helpers[name]
	if !ok {
		return "", nil
	}
	for _, names := range c.blockParams {
		if slices.Contains(names, name) {
			return "", nil
		}
	}
	return name, h
}

// custom calls a custom helper; blk is its block, nil outside block
// position. The arguments are evaluated first, in order, then the hash.
func (s *state) custom(e *expr, blk *block) (v any, err error) {
	c := &HelperCall{Name: e.orig, s: s, blk: blk}
	if len(e.args) > 0 {
		c.Args = make([]any, len(e.args))
		for i, a := range e.args {
			x, err := s.eval(a)
			if err != nil {
				return nil, err
			}
			c.Args[i] = s.valueOf(x)
		}
	}
	if len(e.hash) > 0 {
		c.Hash = make(map[string]any, len(e.hash))
		for i, h := range e.hash {
			x, err := s.eval(h)
			if err != nil {
				return nil, err
			}
			c.Hash[e.hashKeys[i]] = s.valueOf(x)
		}
	}
	if err := s.step(); err != nil {
		return nil, err
	}
	out := len(s.out)
	defer func() {
		c.done = true
		if r := recover(); r != nil {
			s.out = s.out[:out]
			v, err = nil, &RenderError{Msg: fmt.Sprintf("helper %s panicked: %v", e.orig, r)}
		}
	}()
	v, err = e.custom.Func(c)
	if err != nil {
		if re := (*RenderError)(nil); errors.As(err, &re) {
			return nil, err // a limit reached inside Fn
		}
		return nil, &RenderError{Msg: "helper " + e.orig, Err: err}
	}
	return v, nil
}

// customBlock runs a block whose helper is a custom one: its value is
// written as is, as handlebars.js writes a block helper's output.
func (s *state) customBlock(b *block) error {
	v, err := s.custom(b.e, b)
	if err != nil {
		return err
	}
	return s.write(v, false)
}
