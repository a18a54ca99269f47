package program

import (
	"github.com/aymerick/raymond/ast"
)

// Partials, compile side: a {{> name}} compiles to an opPartial that names
// the partial and never embeds it. The partial's Program is found at render
// time in Data.Partials (the call's table) or among the inline partials in
// scope, so that a compiled Program stays right whatever the stored
// partials say when it is rendered, and may be cached by its source alone.

// partialKind is what an opPartial does.
type partialKind uint8

const (
	// partCall renders a named partial ({{> name}}, {{#> name}}...{{/name}}).
	partCall partialKind = iota
	// partBlock renders the current partial block ({{> @partial-block}}).
	partBlock
	// partScope runs body with the inline partials defs in scope: the
	// program of a block that defines inline partials ({{#*inline}}).
	partScope
)

// partialOp is a compiled partial statement.
type partialOp struct {
	kind partialKind
	name string
	// ctx is the context argument ({{> name ctx}}); nil: the current context.
	ctx *expr
	// hash holds the hash values ({{> name k=v}}) and hashKeys their keys:
	// the partial's context is the current one (or ctx) extended with them.
	hash     []*expr
	hashKeys []string
	// indent is the whitespace before a standalone partial: every line the
	// partial renders is prefixed with it, as handlebars.js does.
	indent string
	// body is the content of a partial block ({{#> name}}body{{/name}}),
	// rendered when the partial is missing and by {{> @partial-block}};
	// for partScope, the statements the inline partials are in scope for.
	body *prog
	// defs are the inline partials of partScope.
	defs []inlineDef
}

// inlineDef is an inline partial ({{#*inline "name"}}body{{/inline}}).
type inlineDef struct {
	name string
	body *prog
}

// PartialRef is a partial a Program names, for the caller to resolve before
// rendering: Name as written ({{> shared/footer}} names "shared/footer"),
// the position of its first use, and whether a missing partial of that name
// can be right: every use is a partial block with content to render in its
// place, or the Program defines an inline partial of that name.
type PartialRef struct {
	Name         string
	Line, Column int
	Optional     bool
}

// Partials returns the partials p names, each once, in order of first use,
// and never @partial-block. The slice is p's: do not modify it.
func (p *Program) Partials() []PartialRef { return p.refs }

// Mode returns the mode p was compiled in.
func (p *Program) Mode() Mode { return p.opts.Mode }

// PartialBlock reports the first {{> @partial-block}} of p outside an
// inline partial: rendered as a template of its own rather than as a
// partial, p has no partial block there to render, and fails.
func (p *Program) PartialBlock() (PartialRef, bool) {
	if p.bareBlock == nil {
		return PartialRef{}, false
	}
	return *p.bareBlock, true
}

// Inline returns the names of the inline partials p defines, each once. A
// partial rendered from p may use them. The slice is p's: do not modify it.
func (p *Program) Inline() []string { return p.inline }

// partialName is the name of a partial statement: a path as written
// without brackets, or a literal; a subexpression (a dynamic partial) is
// refused.
func (c *compiler) partialName(n ast.Node) (string, *Error) {
	if _, ok := n.(*ast.SubExpression); ok {
		return "", c.errAt(n, "dynamic partials ({{> (expression)}}) are not supported: name the partial")
	}
	name, ok := ast.HelperNameStr(n)
	if !ok || name == "" {
		return "", c.errAt(n, "a partial needs a name")
	}
	return name, nil
}

// partial compiles {{> name [ctx] [k=v ...]}}; body is the content of a
// partial block, nil for a partial statement.
func (c *compiler) partial(at ast.Node, nameNode ast.Node, params []ast.Node, hash *ast.Hash, indent string, body *prog) (*partialOp, error) {
	name, perr := c.partialName(nameNode)
	if perr != nil {
		return nil, perr
	}
	if len(params) > 1 {
		return nil, c.errAt(at, "a partial takes at most one context argument, not %d", len(params))
	}
	pc := &partialOp{kind: partCall, name: name, indent: indent, body: body}
	if path, ok := nameNode.(*ast.PathExpression); ok && path.Data {
		if name != "@partial-block" || body != nil {
			return nil, c.errAt(at, "unknown partial %q: the only data partial is @partial-block", name)
		}
		pc.kind = partBlock
		if c.inInline == 0 && c.bareBlock == nil {
			loc := at.Location()
			c.bareBlock = &PartialRef{Name: name, Line: loc.Line, Column: column(c.src, loc.Pos)}
		}
	}
	if len(params) == 1 {
		var err error
		if pc.ctx, err = c.param(params[0]); err != nil {
			return nil, err
		}
		if pc.ctx.kind == exPartialBlock {
			return nil, c.errAt(at, "%s", errPartialBlockValue)
		}
	}
	if hash != nil {
		for _, pair := range hash.Pairs {
			v, err := c.param(pair.Val)
			if err != nil {
				return nil, err
			}
			if v.kind == exPartialBlock {
				return nil, c.errAt(at, "%s", errPartialBlockValue)
			}
			pc.hash = append(pc.hash, v)
			pc.hashKeys = append(pc.hashKeys, pair.Key)
		}
	}
	if pc.kind == partCall {
		c.ref(name, at, body != nil)
	}
	return pc, nil
}

// ref notes a use of partial name; optional says this use has content to
// render when the partial is missing.
func (c *compiler) ref(name string, at ast.Node, optional bool) {
	if i, ok := c.refIndex[name]; ok {
		c.refs[i].Optional = c.refs[i].Optional && optional
		return
	}
	if c.refIndex == nil {
		c.refIndex = map[string]int{}
	}
	loc := at.Location()
	c.refIndex[name] = len(c.refs)
	c.refs = append(c.refs, PartialRef{Name: name, Line: loc.Line, Column: column(c.src, loc.Pos), Optional: optional})
}

// finishRefs marks the partials the program defines inline as optional and
// lists the inline names.
func (c *compiler) finishRefs() (refs []PartialRef, inline []string) {
	for name := range c.inline {
		if i, ok := c.refIndex[name]; ok {
			c.refs[i].Optional = true
		}
	}
	return c.refs, c.inlineOrder
}

// defineInline notes an inline partial's name.
func (c *compiler) defineInline(name string) {
	if c.inline == nil {
		c.inline = map[string]bool{}
	}
	if !c.inline[name] {
		c.inline[name] = true
		c.inlineOrder = append(c.inlineOrder, name)
	}
}

// scoped wraps the statements of p in a partScope op when the block defines
// inline partials, so that they are in scope while it runs.
func scoped(p *prog, defs []inlineDef) *prog {
	if len(defs) == 0 {
		return p
	}
	inner := &prog{ops: p.ops}
	return &prog{params: p.params, defs: defs, ops: []op{{kind: opPartial, part: &partialOp{kind: partScope, body: inner, defs: defs}}}}
}

// partialBlock compiles {{#> name [ctx] [k=v ...]}}content{{/name}}.
func (c *compiler) partialBlock(n *ast.BlockStatement) (*partialOp, error) {
	body, err := c.program(n.Program, true)
	if err != nil {
		return nil, err
	}
	if body == nil {
		body = &prog{}
	}
	e := n.Expression
	return c.partial(n, e.Path, e.Params, e.Hash, "", body)
}

// inlinePartial compiles {{#*inline "name"}}content{{/inline}}, the one
// decorator supported.
func (c *compiler) inlinePartial(n *ast.BlockStatement) (inlineDef, error) {
	e := n.Expression
	switch {
	case e.HelperName() != "inline":
		return inlineDef{}, c.errAt(n, "decorator %q is not supported: the only decorator is inline ({{#*inline \"name\"}}...{{/inline}})", e.Canonical())
	case len(e.Params) != 1 || e.Hash != nil:
		return inlineDef{}, c.errAt(n, "inline takes one argument, the partial's name as a string")
	case n.Inverse != nil:
		return inlineDef{}, c.errAt(n, "an inline partial has no {{else}}")
	case n.Program != nil && len(n.Program.BlockParams) > 0:
		return inlineDef{}, c.errAt(n, "an inline partial has no block parameters")
	}
	name, ok := e.Params[0].(*ast.StringLiteral)
	if !ok {
		return inlineDef{}, c.errAt(e.Params[0], "the name of an inline partial must be a string")
	}
	c.inInline++
	body, err := c.program(n.Program, true)
	c.inInline--
	if err != nil {
		return inlineDef{}, err
	}
	if body == nil {
		body = &prog{}
	}
	c.defineInline(name.Value)
	return inlineDef{name: name.Value, body: body}, nil
}
