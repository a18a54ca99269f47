package program

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/aymerick/raymond/ast"
)

// prog is a compiled ast.Program: a flat list of instructions.
type prog struct {
	ops []op
	// params are the block parameters (as |a b|) of the program; only the
	// first two ever receive a value, as in raymond.
	params []string
	// defs are the inline partials the program defines (see scoped).
	defs []inlineDef
}

type opKind uint8

const (
	opText    opKind = iota // write text
	opValue                 // write the value of e, escaped when esc
	opBlock                 // run blk
	opPartial               // run part (partial.go)
)

type op struct {
	kind opKind
	esc  bool
	text string
	e    *expr
	blk  *block
	part *partialOp
}

// block is a compiled ast.BlockStatement.
type block struct {
	e       *expr // its expression; e.kind == exHelper for helper blocks
	body    *prog // nil when the block has no program ({{^x}}...{{/x}})
	inverse *prog // nil when the block has no inverse
	// subject is the path a block iterates or enters ({{#each items}},
	// {{#with item}}, {{#items}}), noted in Data.Missing when absent as an
	// output mustache's is; nil for every other block: {{#if x}} and
	// {{#unless x}} ask whether x is there, so an absent x is no omission.
	subject *expr
}

type exprKind uint8

const (
	exPath   exprKind = iota // look up path
	exLit                    // a literal value, as a helper argument
	exField                  // a literal in helper-name position: a field of the current context
	exHelper                 // call helper with args
	exCustom                 // call custom with args (custom.go)
	// exPartialBlock is @partial-block as the argument of if, unless,
	// with or each: the current partial block rendered as those helpers
	// call handlebars.js's partialBlockWrapper (partialBlockValue).
	exPartialBlock
)

// expr is a compiled expression, subexpression or helper argument.
type expr struct {
	kind   exprKind
	path   *path
	lit    any    // exLit
	field  string // exField
	helper helperID
	custom *Helper
	args   []*expr
	// hash holds the hash values, evaluated as raymond does (for errors and
	// {{log}} side effects); hashKeys their keys. Only includeZero (of if and
	// unless) has a meaning.
	hash     []*expr
	hashKeys []string
	orig     string // as written, for Data.Missing
	missing  int    // the number of orig among the program's output paths
}

// path is a compiled ast.PathExpression.
type path struct {
	orig  string
	bp    string   // the first part, when it may name a block parameter (see scopedID)
	parts []string // brackets removed
	depth int
	data  bool // @x
}

// Compile parses src as raymond's parser does (see parseTokens) and compiles
// it once into a flat, read-only Program. Errors are *Error, or ctx's error
// when ctx is done: Compile checks it between its phases and every 1024
// nodes compiled. Compile takes time and memory linear in len(src), is safe
// for concurrent use, never panics (a panic in the parser becomes an
// *Error) and leaves no goroutine behind.
func Compile(ctx context.Context, src string, opts Options) (p *Program, err error) {
	if opts.Mode != HTML && opts.Mode != Text {
		return nil, &Error{Msg: fmt.Sprintf("invalid mode %d", opts.Mode)}
	}
	if opts.MaxSourceBytes > 0 && len(src) > opts.MaxSourceBytes {
		return nil, &Error{Msg: fmt.Sprintf("template of %d bytes exceeds the limit of %d", len(src), opts.MaxSourceBytes)}
	}
	defer func() {
		if r := recover(); r != nil {
			p, err = nil, &Error{Msg: fmt.Sprintf("parser panic: %v", r)}
		}
	}()
	maxDepth := MaxNesting
	if opts.MaxDepth > 0 && opts.MaxDepth < maxDepth {
		maxDepth = opts.MaxDepth
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if i := strings.IndexByte(src, 0); i >= 0 {
		// handlebars.js's lexer refuses it (its end of input).
		return nil, &Error{Line: 1 + strings.Count(src[:i], "\n"), Column: column(src, i), Msg: "a template cannot contain a NUL byte"}
	}
	if i := strings.Index(src, `\{{{{`); i >= 0 && (i == 0 || src[i-1] != '\\') {
		// handlebars.js ends the escaped text before the second {{,
		// raymond's lexer at the }} after it.
		return nil, &Error{Line: 1 + strings.Count(src[:i], "\n"), Column: column(src, i), Msg: `\{{ right before {{ is ambiguous: write \{{ and {{ apart`}
	}
	toks := lex(src, lexExtended)
	depth, err := precheck(src, toks, maxDepth)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	tree, err := parseTokens(toks)
	if err != nil {
		return nil, parseError(err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c := &compiler{ctx: ctx, src: src, html: opts.Mode == HTML, missing: map[string]int{}, helpers: opts.Helpers}
	body, err := c.program(tree, false)
	if err != nil {
		return nil, err
	}
	p = &Program{body: body, opts: opts, depth: depth, paths: len(c.missing)}
	p.refs, p.inline = c.finishRefs()
	p.bareBlock = c.bareBlock
	p.static, p.isStat = staticText(body)
	return p, nil
}

type compiler struct {
	ctx   context.Context
	nodes int // statements compiled, to check ctx every 1024
	src   string
	html  bool
	// missing numbers the distinct paths of output mustaches (expr.orig),
	// so that a render notes each missing path once in constant time.
	missing map[string]int
	// refs lists the partials used, refIndex finds them by name; inline
	// holds the names of the inline partials defined (partial.go).
	helpers     map[string]*Helper
	refs        []PartialRef
	refIndex    map[string]int
	inline      map[string]bool
	inlineOrder []string
	// inInline counts the inline partials being compiled; bareBlock is the
	// first {{> @partial-block}} outside them.
	inInline  int
	bareBlock *PartialRef
	// blockParams are the block parameters in scope, which take
	// precedence over custom helpers of the same name (custom.go).
	blockParams [][]string
}

// tick counts a node compiled and returns ctx's error, checked every 1024
// nodes.
func (c *compiler) tick() error {
	c.nodes++
	if c.nodes%1024 == 0 {
		return c.ctx.Err()
	}
	return nil
}

// missingID returns the number of an output mustache's path.
func (c *compiler) missingID(orig string) int {
	id, ok := c.missing[orig]
	if !ok {
		id = len(c.missing)
		c.missing[orig] = id
	}
	return id
}

func (c *compiler) errAt(n ast.Node, format string, args ...any) *Error {
	loc := n.Location()
	return &Error{Line: loc.Line, Column: column(c.src, loc.Pos), Msg: fmt.Sprintf(format, args...)}
}

func (c *compiler) program(n *ast.Program, _ bool) (*prog, error) {
	if n == nil {
		return nil, nil
	}
	p := &prog{params: n.BlockParams}
	if len(n.BlockParams) > 0 {
		c.blockParams = append(c.blockParams, n.BlockParams)
		defer func() { c.blockParams = c.blockParams[:len(c.blockParams)-1] }()
	}
	// text holds the contents not yet written as an opText: consecutive
	// contents (split by comments or \{{ escapes) become one opText, joined
	// once rather than with += (quadratic in their number).
	var text []string
	var defs []inlineDef // the program's inline partials
	flush := func() {
		switch len(text) {
		case 0:
			return
		case 1:
			p.ops = append(p.ops, op{kind: opText, text: text[0]})
		default:
			p.ops = append(p.ops, op{kind: opText, text: strings.Join(text, "")})
		}
		text = text[:0]
	}
	for _, st := range n.Body {
		if err := c.tick(); err != nil {
			return nil, err
		}
		switch st.(type) {
		case *ast.ContentStatement, *ast.CommentStatement:
		default:
			flush()
		}
		switch st := st.(type) {
		case *ast.ContentStatement:
			if st.Value != "" {
				text = append(text, st.Value)
			}
		case *ast.CommentStatement:
		case *ast.MustacheStatement:
			e, err := c.expression(st.Expression, posOutput)
			if err != nil {
				return nil, err
			}
			if e.kind == exPath || e.kind == exField {
				e.missing = c.missingID(e.orig)
			}
			p.ops = append(p.ops, op{kind: opValue, e: e, esc: c.html && !st.Unescaped})
		case *ast.BlockStatement:
			switch st.NodeType {
			case nodePartialBlock:
				pc, err := c.partialBlock(st)
				if err != nil {
					return nil, err
				}
				p.ops = append(p.ops, op{kind: opPartial, part: pc})
				continue
			case nodeDecoratorBlock:
				d, err := c.inlinePartial(st)
				if err != nil {
					return nil, err
				}
				defs = append(defs, d)
				continue
			}
			b, err := c.block(st)
			if err != nil {
				return nil, err
			}
			p.ops = append(p.ops, op{kind: opBlock, blk: b})
		case *ast.PartialStatement:
			pc, err := c.partial(st, st.Name, st.Params, st.Hash, st.Indent, nil)
			if err != nil {
				return nil, err
			}
			p.ops = append(p.ops, op{kind: opPartial, part: pc})
		default:
			return nil, c.errAt(st, "unsupported statement %s", st)
		}
	}
	flush()
	return scoped(p, defs), nil
}

func (c *compiler) block(n *ast.BlockStatement) (*block, error) {
	e, err := c.expression(n.Expression, posBlock)
	if err != nil {
		return nil, err
	}
	if n.Program != nil && len(n.Program.BlockParams) > 0 && (e.kind != exHelper || (e.helper != hEach && e.helper != hWith)) {
		// handlebars.js fails at render time on them elsewhere.
		return nil, c.errAt(n, "block parameters (as |x|) are only given by {{#each}} and {{#with}}")
	}
	b := &block{e: e}
	switch {
	case e.kind == exPath || e.kind == exField:
		b.subject = e
	case e.kind == exHelper && (e.helper == hEach || e.helper == hWith) && len(e.args) > 0 &&
		(e.args[0].kind == exPath || e.args[0].kind == exField):
		b.subject = e.args[0]
	}
	if b.subject != nil {
		b.subject.missing = c.missingID(b.subject.orig)
	}
	if b.body, err = c.program(n.Program, true); err != nil {
		return nil, err
	}
	if b.inverse, err = c.program(n.Inverse, false); err != nil {
		return nil, err
	}
	return b, nil
}

// position is where an expression stands, which decides which helpers it may
// call.
type position uint8

const (
	posOutput position = iota // {{x}}
	posBlock                  // {{#x}}
	posSub                    // (x)
)

func (c *compiler) expression(n *ast.Expression, pos position) (*expr, error) {
	if name, h := c.customHelper(n); h != nil {
		return c.customCall(n, name, h, pos)
	}
	name := n.HelperName()
	if id, ok := helperIDs[name]; ok && name != "" && (helperTable[id].js || len(n.Params) > 0 || n.Hash != nil) {
		return c.helperCall(n, id, pos)
	}
	if pos == posSub && len(n.Params) == 0 && n.Hash == nil {
		// handlebars.js calls a helper of that name, or renders nothing.
		what, _ := ast.HelperNameStr(n.Path)
		return nil, c.errAt(n.Path, "a subexpression calls a helper with arguments: write %s, not (%s)", what, what)
	}
	if len(n.Params) > 0 || n.Hash != nil {
		what, _ := ast.HelperNameStr(n.Path)
		return nil, c.errAt(n.Path, "unknown helper %q", what)
	}
	switch x := n.Path.(type) {
	case *ast.PathExpression:
		e, err := c.pathExpr(x)
		if err == nil && e.kind == exPartialBlock {
			// handlebars.js calls the function with its options object
			// as the context ({{@partial-block}}), or renders the block
			// with the function as this ({{#@partial-block}}).
			return nil, c.errAt(x, "%s", errPartialBlockValue)
		}
		return e, err
	default:
		lit, _ := ast.LiteralStr(x)
		return &expr{kind: exField, field: lit, orig: lit}, nil
	}
}

func (c *compiler) helperCall(n *ast.Expression, id helperID, pos position) (*expr, error) {
	name, spec := n.HelperName(), helperTable[id]
	switch {
	case spec.blockOnly && pos != posBlock:
		return nil, c.errAt(n.Path, "helper %q can only open a block ({{#%s ...}})", name, name)
	case spec.noBlock && pos == posBlock:
		return nil, c.errAt(n.Path, "helper %q cannot open a block", name)
	case len(n.Params) < spec.min || (spec.max >= 0 && len(n.Params) > spec.max):
		return nil, c.errAt(n.Path, "helper %q takes %s, not %d (write {{this.%s}} for a parameter named %s)",
			name, spec.arity(), len(n.Params), name, name)
	}
	return c.callArgs(&expr{kind: exHelper, helper: id, orig: name}, n)
}

// callArgs compiles the arguments and hash of the helper call n into e, a
// helper or custom-helper expression, and returns e.
func (c *compiler) callArgs(e *expr, n *ast.Expression) (*expr, error) {
	for _, pn := range n.Params {
		a, err := c.param(pn)
		if err != nil {
			return nil, err
		}
		e.args = append(e.args, a)
	}
	if n.Hash != nil {
		for _, pair := range n.Hash.Pairs {
			v, err := c.param(pair.Val)
			if err != nil {
				return nil, err
			}
			e.hash = append(e.hash, v)
			e.hashKeys = append(e.hashKeys, pair.Key)
		}
	}
	if e.kind == exHelper && (e.helper == hIf || e.helper == hUnless || e.helper == hWith || e.helper == hEach) {
		return e, nil
	}
	for _, a := range slices.Concat(e.args, e.hash) {
		if a.kind == exPartialBlock {
			return nil, c.errAt(n.Path, "%s", errPartialBlockValue)
		}
	}
	return e, nil
}

// errPartialBlockValue is why @partial-block is refused but as the
// argument of if, unless, with and each, which call its function with no
// context: it is a function in handlebars.js, which other helpers receive
// uncalled, a mustache calls with its options object as the context, and
// a section renders its block with as this.
const errPartialBlockValue = "@partial-block is only tested ({{#if @partial-block}}, unless, with, each) or rendered ({{> @partial-block}}): elsewhere handlebars.js uses it as a function"

// pathExpr compiles a path used as a value: @partial-block, else a lookup.
func (c *compiler) pathExpr(x *ast.PathExpression) (*expr, error) {
	path, err := c.compilePath(x)
	if err != nil {
		return nil, err
	}
	if path.data && path.parts[0] == "partial-block" {
		if len(path.parts) > 1 || path.depth > 0 {
			// a property of a function, or the partial block of a data
			// frame further up.
			return nil, c.errAt(x, "%q: only @partial-block itself is supported", x.Original)
		}
		return &expr{kind: exPartialBlock, orig: x.Original}, nil
	}
	return &expr{kind: exPath, path: path, orig: x.Original}, nil
}

// param compiles a helper argument or hash value.
func (c *compiler) param(n ast.Node) (*expr, error) {
	if err := c.tick(); err != nil {
		return nil, err
	}
	switch x := n.(type) {
	case *ast.PathExpression:
		return c.pathExpr(x)
	case *ast.SubExpression:
		return c.expression(x.Expression, posSub)
	case *ast.StringLiteral:
		return &expr{kind: exLit, lit: x.Value}, nil
	case *ast.BooleanLiteral:
		return &expr{kind: exLit, lit: x.Value}, nil
	case *ast.NumberLiteral:
		return &expr{kind: exLit, lit: x.Number()}, nil
	}
	return nil, c.errAt(n, "unsupported argument %s", n)
}

// compilePath compiles a path. A data variable with no name ({{@.}},
// {{@this}}) is refused: raymond panics on it (index out of range), and it
// names nothing a template could mean.
func (c *compiler) compilePath(x *ast.PathExpression) (*path, error) {
	if x.Data && len(x.Parts) == 0 {
		return nil, c.errAt(x, "a data variable needs a name, such as @index or @key: %q", x.Original)
	}
	if x.Data && len(x.Parts) > 0 {
		if id, ok := helperIDs[x.Parts[0]]; ok && helperTable[id].js {
			// handlebars.js calls the helper of that name.
			return nil, c.errAt(x, "a data variable named like the helper %s: %q", x.Parts[0], x.Original)
		}
	}
	p := &path{orig: x.Original, depth: x.Depth, data: x.Data}
	for _, part := range x.Parts {
		if len(part) >= 2 && part[0] == '[' && part[len(part)-1] == ']' {
			part = part[1 : len(part)-1]
		}
		p.parts = append(p.parts, part)
	}
	if len(p.parts) > 0 && x.Depth == 0 && !scopedID(x.Original) {
		p.bp = p.parts[0]
	}
	return p, nil
}

// staticText returns the output of a program made of text only.
func staticText(p *prog) (string, bool) {
	var b strings.Builder
	for _, o := range p.ops {
		if o.kind != opText {
			return "", false
		}
		b.WriteString(o.text)
	}
	return b.String(), true
}
