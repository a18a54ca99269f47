package program

import (
	"context"
	"errors"
	"fmt"
	"strconv"
)

// Mode says how a program writes the values of its mustaches. The zero value
// is invalid: Compile refuses it.
type Mode uint8

const (
	// HTML escapes the value of {{x}} exactly as handlebars.js does (& < >
	// " ' ` = become &amp; &lt; &gt; &quot; &#x27; &#x60; &#x3D;) and writes
	// {{{x}}} and {{&x}} as is. It is the mode of an html body.
	HTML Mode = iota + 1
	// Text writes the value of {{x}} and {{{x}}} as is. It is the mode of a
	// subject, a text body and header values.
	Text
)

// Options configures Compile. The zero value of each limit means no limit;
// the zero Mode is refused. Compile copies the Options: changing them later
// has no effect on the Program.
type Options struct {
	// Mode says whether {{x}} is HTML-escaped (HTML) or not (Text).
	Mode Mode
	// MaxSourceBytes refuses a source longer than this many bytes with an
	// *Error. 0: no limit.
	MaxSourceBytes int
	// MaxDepth refuses a source whose blocks and subexpressions nest deeper
	// than this with an *Error. 0: no limit other than the ceiling of
	// MaxNesting that protects the stack.
	MaxDepth int
	// MaxOutputBytes stops a render that would produce more than this many
	// bytes with ErrOutputTooLarge. 0: no limit.
	MaxOutputBytes int
	// MaxSteps stops a render that takes more than this many evaluation steps
	// (one per instruction executed, per iteration of a block, per element
	// of a composite value printed, per element of an array context a path
	// is looked up in, per parameter when the root is copied into a map to
	// be used as a value, and, for a helper that prints or compares its
	// arguments, per element of an array or map argument and per KiB of a
	// string argument) with ErrTooManySteps. 0: no limit.
	MaxSteps int
	// Log receives the arguments of each {{log x ...}} evaluated. It is called
	// from the goroutine that renders, possibly from several at once, and
	// must not keep args. nil: the arguments are discarded. Nothing is ever
	// written to the log package.
	Log func(args []any)
	// Helpers are the caller's own helpers by name (custom.go): a name in
	// helper position that is a key of Helpers calls that helper, even with
	// no arguments. nil: none. Compile does not copy the map: it must not
	// change while Programs compiled with it are in use.
	Helpers map[string]*Helper
}

// MaxNesting is the deepest nesting of blocks and subexpressions Compile
// accepts whatever Options.MaxDepth says: raymond's parser and the evaluator
// recurse once per level.
const MaxNesting = 10000

// Error is a compile error: the source is not valid handlebars, or uses a
// construct this package refuses, or exceeds a limit of Options. Line and
// Column are 1-based; 0 means unknown. An *Error is immutable.
type Error struct {
	Line, Column int
	Msg          string
}

// Error formats the position and the message.
func (e *Error) Error() string {
	switch {
	case e.Line > 0 && e.Column > 0:
		return "program: line " + strconv.Itoa(e.Line) + ", column " + strconv.Itoa(e.Column) + ": " + e.Msg
	case e.Line > 0:
		return "program: line " + strconv.Itoa(e.Line) + ": " + e.Msg
	}
	return "program: " + e.Msg
}

// Sentinel errors of Append, always wrapped in a *RenderError.
var (
	// ErrOutputTooLarge: the render would produce more than
	// Options.MaxOutputBytes bytes.
	ErrOutputTooLarge = errors.New("program: output too large")
	// ErrTooManySteps: the render took more than Options.MaxSteps steps.
	ErrTooManySteps = errors.New("program: too many evaluation steps")
	// ErrOverBudget: the render would bring Data.Written over
	// Data.MaxBytes.
	ErrOverBudget = errors.New("program: output over the data's budget")
)

// RenderError is what Append returns when a render fails: a limit was
// reached (Err is ErrOutputTooLarge, ErrOverBudget or ErrTooManySteps), the
// context was done (Err is the context's error), a value cannot be
// printed (a func, a chan, a value nested too deep), or the evaluator
// panicked (Msg says so; the panic does not escape). An *RenderError is
// immutable.
type RenderError struct {
	Msg string
	Err error
}

// Error formats the message and the wrapped error.
func (e *RenderError) Error() string {
	if e.Err != nil {
		if e.Msg == "" {
			return "program: render: " + e.Err.Error()
		}
		return "program: render: " + e.Msg + ": " + e.Err.Error()
	}
	return "program: render: " + e.Msg
}

// Unwrap returns Err.
func (e *RenderError) Unwrap() error { return e.Err }

// Data is one recipient's view of the parameters. Lookups of top-level names
// try Params first, then Globals, key by key: nothing is merged per render.
// Values are what encoding/json produces (map[string]any, []any, string,
// float64, bool, nil), which take a fast path, or other Go values (integers,
// typed slices and maps, structs, pointers), read by reflection, a struct's
// fields under their encoding/json names (see the package documentation).
// Methods and func values in the data are never called.
//
// Append reads Params and Globals and never modifies them; the caller must
// not modify them during a render. A Data is not safe for concurrent use
// (Append appends to Missing): use one per goroutine.
type Data struct {
	// Params are the recipient's own parameters. nil: none.
	Params map[string]any
	// Globals are the parameters shared by every recipient. nil: none.
	Globals map[string]any
	// ParamsOrder and GlobalsOrder are the keys of Params and Globals in
	// the order their JSON gave them (DecodeMapKeys), for {{#each}} over
	// the root context, which then visits the keys of the merge as
	// handlebars.js visits those of Object.assign({}, globals, params):
	// integer-like keys first, in numeric order, then the others in
	// order of first appearance, globals first (a key of both keeps its
	// place among the globals). A key of the order that is not in its map
	// is skipped; the keys of a map that are not in its order come after
	// those that are, sorted. Both nil: no order, all the keys sorted as
	// those of one Go map.
	ParamsOrder, GlobalsOrder []string
	// Missing collects, per render, the path (as written, such as
	// "first_name" or "order.id") of each output mustache, and of each
	// block's subject ({{#each items}}, {{#with item}}, {{#items}}), whose
	// value was absent: some segment of the path is not present anywhere it
	// was looked up. Conditions ({{#if x}}, {{#unless x}}) and helper
	// arguments never count: they ask whether a value is there. Each path
	// is appended once per render. Append only appends: the caller resets it
	// (Missing = Missing[:0]) between renders.
	Missing []string
	// MaxBytes, when positive, bounds the output of all the renders with
	// this Data together, such as the parts of one message: a render that
	// would bring Written over MaxBytes stops, as soon as it would, with
	// ErrOverBudget, so that little more than the budget is ever appended
	// (at most one chunk of an escaped string or one composite value
	// printed). Options.MaxOutputBytes still bounds each
	// render; when it is the tighter bound (or equal), exceeding it is
	// ErrOutputTooLarge. 0: no bound but Options.MaxOutputBytes.
	MaxBytes int
	// Written counts the bytes the renders with this Data appended: each
	// successful Append adds its output. Append only adds: the caller resets
	// it along with Missing.
	Written int
	// Partials is the call's table of the partials that {{> name}} renders,
	// shared read-only by every render of the call. nil: none; a partial
	// that is neither in it nor inline in scope is a render error.
	Partials *Partials
}

// Program is a compiled template: a flat list of literal bytes and value and
// block instructions with paths split in advance. A *Program is immutable
// and safe for concurrent use by any number of goroutines.
type Program struct {
	body   *prog
	opts   Options
	static string
	isStat bool
	// depth is the deepest block nesting of body, to size per-render stacks.
	depth int
	// paths is the number of distinct paths of output mustaches.
	paths int
	// refs are the partials the program names, inline those it defines.
	refs      []PartialRef
	inline    []string
	bareBlock *PartialRef
}

// Static reports the template's whole output when it contains no mustache,
// block or other instruction (only content and comments), and false
// otherwise.
func (p *Program) Static() (string, bool) { return p.static, p.isStat }

// Append renders the program for d, appending the output to dst, and returns
// the extended buffer. d may be nil (no parameters). On error the returned
// buffer holds dst with nothing appended (possibly grown) and the error is
// a *RenderError.
// Append checks ctx when it starts and then every 1024 steps or so, and
// stops with ctx's error (wrapped in a *RenderError) once ctx is done.
// Append never panics; a steady-state render of a template over
// encoding/json values allocates nothing beyond growing dst, d.Missing and
// printing composite values.
func (p *Program) Append(ctx context.Context, dst []byte, d *Data) (out []byte, err error) {
	if err := ctx.Err(); err != nil {
		return dst, &RenderError{Err: err}
	}
	if d == nil {
		d = &Data{}
	}
	if p.isStat {
		if max, budget := p.limit(len(dst), d); len(p.static) > max-len(dst) {
			return dst, tooLarge(budget)
		}
		d.Written += len(p.static)
		return append(dst, p.static...), nil
	}
	s := getState(ctx, p, d, dst)
	start := len(dst)
	defer func() {
		if r := recover(); r != nil {
			out, err = dst[:start], &RenderError{Msg: fmt.Sprintf("panic: %v", r)}
		}
		putState(s)
	}()
	if err := s.run(p.body); err != nil {
		var re *RenderError
		if !errors.As(err, &re) {
			err = &RenderError{Err: err}
		}
		// s.out[:start] holds what dst[:start] holds, in the buffer as
		// grown, which the caller may reuse.
		return s.out[:start], err
	}
	d.Written += len(s.out) - start
	return s.out, nil
}

// limit returns the length the output buffer may reach when a render
// starts at length start, and whether d's budget (rather than
// Options.MaxOutputBytes) sets it.
func (p *Program) limit(start int, d *Data) (max int, budget bool) {
	max = int(^uint(0) >> 1)
	if m := p.opts.MaxOutputBytes; m > 0 {
		max = start + m
	}
	if d.MaxBytes > 0 {
		if b := start + d.MaxBytes - d.Written; b < max {
			return b, true
		}
	}
	return max, false
}

// tooLarge is the error of a render stopped by an output bound.
func tooLarge(budget bool) error {
	if budget {
		return &RenderError{Err: ErrOverBudget}
	}
	return &RenderError{Err: ErrOutputTooLarge}
}
