package postroom

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/postroom/postroom/internal/program"
)

// Partials: {{> name}} in any template of a call (subject, html, text,
// header values; both operations) renders the template name of the call's
// account in Options.Templates. A call resolves and compiles the partials
// its templates name once, before anything is sent, into a table that
// every recipient's render reads (program.Partials); a compiled template
// only names its partials, so a cached one stays right when a stored
// partial changes.

// Partial errors, each the Err of a PartialChainError. Both wrap
// ErrTemplateSyntax.
var (
	// ErrPartialCycle: partials call each other in a cycle ({{> a}} in b
	// and {{> b}} in a), which would render for ever.
	ErrPartialCycle = fmt.Errorf("%w: partials call each other in a cycle", ErrTemplateSyntax)
	// ErrPartialTooDeep: a chain of partials is longer than
	// Options.MaxPartialDepth.
	ErrPartialTooDeep = fmt.Errorf("%w: partials nested too deep", ErrTemplateSyntax)
)

// PartialChainError is the Err of a ValidationError about a partial: the
// chain of partials from the template of the ValidationError's Field to
// the one at fault, and what is wrong with it. A PartialChainError is
// immutable.
type PartialChainError struct {
	// Chain holds the partials' names, from the one the template calls to
	// the one at fault: ["layout", "footer"] for a footer that layout
	// calls. For a cycle, the last name is also an earlier one.
	Chain []string
	// Err is ErrTemplateNotFound (the store has no such partial),
	// ErrPartialCycle, ErrPartialTooDeep, or an error wrapping
	// ErrTemplateSyntax (the partial does not compile).
	Err error
}

// Error names the chain and the error.
func (e *PartialChainError) Error() string {
	return "postroom: partial " + strings.Join(e.Chain, " > ") + ": " + e.Err.Error()
}

// Unwrap returns e.Err.
func (e *PartialChainError) Unwrap() error { return e.Err }

// partialRoot is one of a call's templates, compiled, with the field its
// errors name.
type partialRoot struct {
	field string
	p     *program.Program
}

// roots lists the compiled templates of t with their fields.
func (t *templates) roots(subject, html, text string) []partialRoot {
	r := []partialRoot{{subject, t.subject}, {html, t.html}, {text, t.text}}
	for i, p := range t.headers {
		r = append(r, partialRoot{fmt.Sprintf("message.headers[%d].value", i), p})
	}
	return r
}

// partialKey is a partial compiled in a mode.
type partialKey struct {
	mode program.Mode
	name string
}

// partialSource is a stored partial's source, or why there is none.
type partialSource struct {
	src     string
	missing string // the reason it is missing; "" when found
}

// linker resolves one call's partials.
type linker struct {
	m       *Mailer
	ctx     context.Context
	account string
	sources map[string]partialSource
	// depth holds, per partial compiled, the shortest chain it was
	// explored from: a longer one finds nothing new.
	depth    map[partialKey]int
	compiled map[partialKey]*program.Program // nil: it does not compile
	table    *program.Partials
	inline   map[string]bool // the names of the inline partials of every program
	missing  []missingPartial
	errs     []error
	reported map[string]bool // a partial's compile error, by field and name
}

type missingPartial struct {
	field, chain, name, reason string
	names                      []string
}

// linkPartials fetches, compiles and checks the partials that the call's
// compiled templates name, and sets t.partials. A partial missing from the
// store (unless a partial block provides content in its place or an inline
// partial of that name exists), a partial that does not compile, partials
// that call each other in a cycle, and a chain deeper than
// Options.MaxPartialDepth are ValidationErrors naming the template's field
// and the chain of partials. An error of the store other than
// ErrTemplateNotFound is returned as is.
func (m *Mailer) linkPartials(ctx context.Context, account string, t *templates, roots []partialRoot) error {
	if !slices.ContainsFunc(roots, usesPartials) {
		return nil // the common case: nothing to fetch, no table
	}
	var errs []error
	for _, r := range roots {
		if r.p == nil {
			continue
		}
		if ref, ok := r.p.PartialBlock(); ok {
			errs = append(errs, &ValidationError{Field: r.field, Err: ErrTemplateSyntax,
				Reason: fmt.Sprintf("template error at line %d, column %d: {{> @partial-block}} outside a partial: no partial block to render", ref.Line, ref.Column)})
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	l := &linker{m: m, ctx: ctx, account: account, sources: map[string]partialSource{}, depth: map[partialKey]int{}, compiled: map[partialKey]*program.Program{},
		table: &program.Partials{}, inline: map[string]bool{}, reported: map[string]bool{}}
	for _, r := range roots {
		if !usesPartials(r) {
			continue
		}
		if err := l.walk(r.field, r.p, []string{r.field}); err != nil {
			return err
		}
	}
	for _, mp := range l.missing {
		if l.inline[mp.name] {
			continue
		}
		l.errs = append(l.errs, &ValidationError{Field: mp.field, Reason: fmt.Sprintf("partial %q %s (%s)", mp.name, mp.reason, mp.chain),
			Err: &PartialChainError{Chain: mp.names, Err: ErrTemplateNotFound}})
	}
	if len(l.errs) > 0 {
		return errors.Join(l.errs...)
	}
	t.partials = l.table
	return nil
}

// usesPartials reports whether r names or defines partials.
func usesPartials(r partialRoot) bool {
	if r.p == nil {
		return false
	}
	_, block := r.p.PartialBlock()
	return len(r.p.Partials()) > 0 || len(r.p.Inline()) > 0 || block
}

// walk resolves the partials p names; chain is the field and the partials
// that led to p.
func (l *linker) walk(field string, p *program.Program, chain []string) error {
	for _, name := range p.Inline() {
		l.inline[name] = true
	}
	mode := p.Mode()
	for _, ref := range p.Partials() {
		next := append(chain[:len(chain):len(chain)], ref.Name)
		if slices.Contains(chain[1:], ref.Name) {
			l.errs = append(l.errs, &ValidationError{Field: field, Reason: fmt.Sprintf("partials call each other in a cycle (%s)", strings.Join(next, " > ")),
				Err: &PartialChainError{Chain: next[1:], Err: ErrPartialCycle}})
			continue
		}
		if len(chain) > l.m.opts.MaxPartialDepth {
			l.errs = append(l.errs, &ValidationError{Field: field, Reason: fmt.Sprintf("partials nested deeper than %d (%s)", l.m.opts.MaxPartialDepth, strings.Join(next, " > ")),
				Err: &PartialChainError{Chain: next[1:], Err: ErrPartialTooDeep}})
			continue
		}
		src, err := l.source(ref.Name)
		if err != nil {
			return err
		}
		if src.missing != "" {
			if !ref.Optional {
				l.missing = append(l.missing, missingPartial{field: field, chain: strings.Join(next, " > "), name: ref.Name, reason: src.missing, names: next[1:]})
			}
			continue
		}
		key := partialKey{mode, ref.Name}
		if d, ok := l.depth[key]; ok && d <= len(chain) {
			continue
		}
		l.depth[key] = len(chain)
		pp, ok := l.compiled[key]
		if !ok {
			var err error
			if pp, err = l.compile(field, next, key, src.src); err != nil {
				return err
			}
			l.compiled[key] = pp
			if pp != nil {
				l.table.Add(ref.Name, pp)
			}
		}
		if pp == nil {
			continue
		}
		if err := l.walk(field, pp, next); err != nil {
			return err
		}
	}
	return nil
}

// source fetches partial name from the store, once per call.
func (l *linker) source(name string) (partialSource, error) {
	if s, ok := l.sources[name]; ok {
		return s, nil
	}
	var s partialSource
	store := l.m.opts.Templates
	if store == nil {
		s.missing = "cannot be found: no template store is configured (Options.Templates)"
	} else {
		src, err := store.Template(l.ctx, l.account, name)
		switch {
		case errors.Is(err, ErrTemplateNotFound):
			s.missing = "not found" + emptyAccountHint(l.account)
		case err != nil:
			if ctxErr := l.ctx.Err(); ctxErr != nil {
				return s, ctxErr
			}
			return s, fmt.Errorf("postroom: template store: partial %q: %w", name, err)
		default:
			s.src = src
		}
	}
	l.sources[name] = s
	return s, nil
}

// compile compiles a partial in the mode of the template that calls it;
// a compile error is reported once per field and partial.
func (l *linker) compile(field string, chain []string, key partialKey, src string) (*program.Program, error) {
	p, err := l.m.compile(l.ctx, src, key.mode)
	if err == nil {
		return p, nil
	}
	if ctxErr := l.ctx.Err(); ctxErr != nil {
		return nil, ctxErr
	}
	if k := field + "\x00" + key.name; !l.reported[k] {
		l.reported[k] = true
		l.errs = append(l.errs, &ValidationError{Field: field, Reason: fmt.Sprintf("partial %q (%s): %s", key.name, strings.Join(chain, " > "), templateReason(err)), Err: &PartialChainError{Chain: chain[1:], Err: fmt.Errorf("%w: %w", ErrTemplateSyntax, err)}})
	}
	return nil, nil
}
