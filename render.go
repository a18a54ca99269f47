package postroom

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/postroom/postroom/internal/program"
)

// templates holds a call's compiled templates: each part compiled once per
// call, read-only afterwards and shared by every render worker.
type templates struct {
	subject    *program.Program
	html, text *program.Program // nil when the message has no such part
	// headers holds, for each custom header, its program, or nil when the
	// value is static (no placeholder): headerStatic[i] is then its value.
	headers      []*program.Program
	headerStatic []string
	// partials is the call's table of partials (partials.go); nil: none.
	partials *program.Partials
}

// templateSource is one template of a call and the field its errors name.
type templateSource struct {
	field string
	src   string
}

// compileTemplates compiles the subject, bodies and header values of a call,
// or takes them from the Mailer's cache of compiled templates (cache.go).
// A syntax error names the part and its position. When ctx is done, it
// stops and returns ctx's error.
func (m *Mailer) compileTemplates(ctx context.Context, subject, html, text templateSource, headers []Header) (*templates, error) {
	t := &templates{headers: make([]*program.Program, len(headers)), headerStatic: make([]string, len(headers))}
	var errs []error
	compile := func(s templateSource, mode program.Mode) *program.Program {
		if ctx.Err() != nil {
			return nil
		}
		p, err := m.compile(ctx, s.src, mode)
		if err != nil && ctx.Err() == nil {
			errs = append(errs, &ValidationError{Field: s.field, Reason: templateReason(err), Err: fmt.Errorf("%w: %w", ErrTemplateSyntax, err)})
		}
		return p
	}
	t.subject = compile(subject, program.Text)
	if html.src != "" {
		t.html = compile(html, program.HTML)
	}
	if text.src != "" {
		t.text = compile(text, program.Text)
	}
	for i, h := range headers {
		p := compile(templateSource{fmt.Sprintf("message.headers[%d].value", i), h.Value}, program.Text)
		if p == nil {
			continue
		}
		if v, static := p.Static(); static {
			t.headerStatic[i] = v
		} else {
			t.headers[i] = p
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return t, nil
}

// templateReason describes a compile error for a ValidationError.
func templateReason(err error) string {
	var pe *program.Error
	if errors.As(err, &pe) && pe.Line > 0 {
		return fmt.Sprintf("template error at line %d, column %d: %s", pe.Line, pe.Column, pe.Msg)
	}
	return "template error: " + err.Error()
}

// templateLog receives {{log}} arguments: they go to Options.Logger at
// debug level, never to the host's default logger.
func (m *Mailer) templateLog(args []any) {
	m.opts.Logger.Debug("template log", slog.Any("args", args))
}

// renderBuffers are one worker's reusable render outputs: every part of a
// recipient's message rendered into one buffer, out, which the budget
// bounds as a whole; subject, html and text are slices of it.
type renderBuffers struct {
	out                 []byte
	subject, html, text []byte
	// ends holds the end offset in out of each dynamic header value;
	// headerVals the values, cut from one string.
	ends       []int
	headerVals []string
	data       program.Data
}

// render renders every template of t for one recipient into b, all parts
// together within budget bytes (the message size limit less what every
// message of the call carries): the render stops as soon as the parts
// would exceed it, so that a recipient never holds more than that in
// rendered text. A failure is returned as an error carrying the
// recipient's outcome (see outcomeOf), or, when ctx is done, as an error
// wrapping ctx's.
func (t *templates) render(ctx context.Context, b *renderBuffers, staticHeaders []Header, r *Recipient, call *Call, strict bool, budget int) error {
	if budget <= 0 {
		return invalid(ReasonMessageTooLarge, "the images, attachments and fixed headers leave no room for the rendered parts").asError()
	}
	b.data = program.Data{Params: r.Params, ParamsOrder: r.order, Globals: call.GlobalParams, GlobalsOrder: call.globalOrder, Missing: b.data.Missing[:0], MaxBytes: budget, Partials: t.partials}
	b.ends, b.headerVals = b.ends[:0], b.headerVals[:0]
	var err error
	// The parts' offsets in out; the slices are cut at the end, from the
	// buffer as grown.
	var subject, html, text [2]int
	part := func(p *program.Program, name string, off *[2]int) error {
		off[0] = len(b.out)
		if p != nil {
			if b.out, err = p.Append(ctx, b.out, &b.data); err != nil {
				return renderError(name, err, budget)
			}
		}
		off[1] = len(b.out)
		return nil
	}
	b.out = b.out[:0]
	if err := part(t.subject, "subject", &subject); err != nil {
		return err
	}
	if bytes.ContainsAny(b.out[subject[0]:subject[1]], "\r\n\x00") {
		return invalid(ReasonHeaderInjection, "subject").asError()
	}
	if err := part(t.html, "html", &html); err != nil {
		return err
	}
	if err := part(t.text, "text", &text); err != nil {
		return err
	}
	for i, p := range t.headers {
		if p == nil {
			continue
		}
		var h [2]int
		if err := part(p, staticHeaders[i].Name, &h); err != nil {
			return err
		}
		if bytes.ContainsAny(b.out[h[0]:h[1]], "\r\n\x00") {
			return invalid(ReasonHeaderInjection, staticHeaders[i].Name).asError()
		}
		b.ends = append(b.ends, h[1])
	}
	b.subject, b.html, b.text = b.out[subject[0]:subject[1]], b.out[html[0]:html[1]], b.out[text[0]:text[1]]
	if len(b.ends) > 0 {
		// One string for all the values, not one per header.
		start := text[1]
		all := string(b.out[start:])
		for _, end := range b.ends {
			b.headerVals = append(b.headerVals, all[:end-start])
			all, start = all[end-start:], end
		}
	}
	if strict && len(b.data.Missing) > 0 {
		missing := slices.Clone(b.data.Missing)
		slices.Sort(missing)
		missing = slices.Compact(missing)
		return invalid(ReasonMissingParam, strings.Join(missing, ", ")).asError()
	}
	return nil
}

// renderError is the failure of rendering part: ctx's error, a message
// over budget, a limit passed, a helper argument that does not convert
// (said in the template's terms), or an error the reason does not repeat
// (it may be a panic's text, or a helper's own); the Mailer logs it.
func renderError(part string, err error, budget int) error {
	o := outcome{status: StatusInvalid, code: ReasonRenderError, detail: part, err: err, logErr: true}
	var arg *argumentError
	switch {
	case fromContext(err):
		return err
	case errors.Is(err, program.ErrOverBudget):
		o.code, o.logErr = ReasonMessageTooLarge, false
		o.detail = fmt.Sprintf("the rendered parts exceed the %d bytes the message size limit leaves them (at %s)", budget, part)
	case errors.Is(err, program.ErrOutputTooLarge):
		o.detail, o.logErr = part+": output over the render size limit", false
	case errors.Is(err, program.ErrTooManySteps):
		o.detail, o.logErr = part+": over the render step limit", false
	case errors.As(err, &arg):
		// The template is the caller's input: say what in it went wrong.
		o.detail, o.logErr = part+": "+arg.detail(), false
	}
	return o.asError()
}
