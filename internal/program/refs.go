package program

import (
	"slices"
	"strings"
)

// Referenced params: what a template reads from its data, found from the
// compiled program without rendering it (Postmark's SuggestedTemplateModel,
// SES's MissingRenderingAttribute).

// Params returns the parameters p references, sorted and without
// duplicates: the path of every mustache, block expression and helper
// argument, as a dotted path from the root of the data, so that a caller
// can tell which params a recipient must have.
//
// Paths are written from the root whatever context they are evaluated in:
// inside {{#each items}} or {{#items}}, {{name}} is "items.name" (the name
// of each element); inside {{#with order}}, {{id}} is "order.id"; ../x, @root.x
// and block parameters ({{#each items as |item|}}{{item.name}}) are
// resolved the same way. A block's own path is listed too ("items").
// Data variables (@index, @key, @first, @last), the index or key block
// parameter, and paths inside a block whose context is not a path (such
// as {{#with (lookup a b)}}) are left out: no param of the data names
// them. Conditions count: {{#if vip}} references vip.
//
// A name is looked up in its context only, as handlebars.js does: inside
// {{#each items}}, {{currency}} is "items.currency", never the outer
// currency (write ../currency for that).
func (p *Program) Params() []string {
	if p.isStat {
		return nil
	}
	w := refWalker{seen: map[string]bool{}}
	w.prog(p.body, []refCtx{{known: true}}, nil)
	slices.Sort(w.out)
	return w.out
}

// refCtx is the context a path is evaluated in: the dotted path from the
// data's root (empty for the root itself), or unknown.
type refCtx struct {
	path  string
	known bool
}

// refParam is a block parameter in scope: its name and the context it
// stands for, or none for an index or key.
type refParam struct {
	name string
	ctx  refCtx
	key  bool
}

type refWalker struct {
	seen map[string]bool
	out  []string
}

// add notes a referenced path.
func (w *refWalker) add(path string) {
	if path == "" || w.seen[path] {
		return
	}
	w.seen[path] = true
	w.out = append(w.out, path)
}

// prog walks the ops of a program evaluated in ctxs (the innermost last)
// with the block parameters params in scope (the innermost last).
func (w *refWalker) prog(p *prog, ctxs []refCtx, params []refParam) {
	if p == nil {
		return
	}
	for _, o := range p.ops {
		switch o.kind {
		case opValue:
			w.expr(o.e, ctxs, params)
		case opBlock:
			w.block(o.blk, ctxs, params)
		}
	}
}

// block walks a block: its expression, then its body in the context the
// block gives it, and its inverse in the block's own context.
func (w *refWalker) block(b *block, ctxs []refCtx, params []refParam) {
	w.expr(b.e, ctxs, params)
	inner, changes := refCtx{}, false
	switch {
	case b.e.kind == exPath:
		inner, changes = w.resolve(b.e.path, ctxs, params), true
	case b.e.kind == exHelper && (b.e.helper == hEach || b.e.helper == hWith):
		changes = true
		if a := b.e.args[0]; a.kind == exPath {
			inner = w.resolve(a.path, ctxs, params)
		}
	}
	if b.body != nil {
		bodyCtxs, bodyParams := ctxs, params
		if changes {
			bodyCtxs = append(slices.Clip(ctxs), inner)
			for i, name := range b.body.params {
				switch i {
				case 0:
					bodyParams = append(slices.Clip(bodyParams), refParam{name: name, ctx: inner})
				case 1:
					bodyParams = append(slices.Clip(bodyParams), refParam{name: name, key: true})
				}
			}
		}
		w.prog(b.body, bodyCtxs, bodyParams)
	}
	w.prog(b.inverse, ctxs, params)
}

// expr notes the paths of an expression and of its arguments.
func (w *refWalker) expr(e *expr, ctxs []refCtx, params []refParam) {
	switch e.kind {
	case exPath:
		if c := w.resolve(e.path, ctxs, params); c.known {
			w.add(c.path)
		}
	case exField:
		if c := ctxs[len(ctxs)-1]; c.known {
			w.add(joinPath(c.path, e.field))
		}
	case exHelper:
		for _, a := range e.args {
			w.expr(a, ctxs, params)
		}
		for _, h := range e.hash {
			w.expr(h, ctxs, params)
		}
	}
}

// resolve returns the context a path names, from the root.
func (w *refWalker) resolve(p *path, ctxs []refCtx, params []refParam) refCtx {
	parts := p.parts
	switch {
	case p.data && p.depth == 0 && len(parts) > 0 && parts[0] == "root":
		return refCtx{path: strings.Join(parts[1:], "."), known: true}
	case p.data:
		// Any other @x is a data variable, never a param (as in
		// handlebars.js).
		return refCtx{}
	}
	if p.bp != "" {
		for i := len(params) - 1; i >= 0; i-- {
			if params[i].name != p.bp {
				continue
			}
			if params[i].key || !params[i].ctx.known {
				return refCtx{}
			}
			return refCtx{path: joinPath(params[i].ctx.path, strings.Join(parts[1:], ".")), known: true}
		}
	}
	c := ctxs[max(0, len(ctxs)-1-p.depth)]
	if !c.known {
		return refCtx{}
	}
	return refCtx{path: joinPath(c.path, strings.Join(parts, ".")), known: true}
}

// joinPath joins two dotted paths, either of which may be empty.
func joinPath(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "." + b
}
