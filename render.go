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
}

// templateSource is one template of a call and the field its errors name.
type templateSource struct {
	field string
	src   string
}

// compileTemplates compiles the subject, bodies and header values of a call.
// A syntax error names the part and its position. When ctx is done, it
// stops and returns ctx's error.
func (m *Mailer) compileTemplates(ctx context.Context, subject, html, text templateSource, headers []Header) (*templates, error) {
	t := &templates{headers: make([]*program.Program, len(headers)), headerStatic: make([]string, len(headers))}
	var errs []error
	compile := func(s templateSource, mode program.Mode) *program.Program {
		if ctx.Err() != nil {
			return nil
		}
		p, err := program.Compile(ctx, s.src, program.Options{
			Mode:           mode,
			MaxSourceBytes: m.opts.MaxTemplateBytes,
			MaxDepth:       m.opts.MaxTemplateDepth,
			MaxOutputBytes: m.opts.MaxRenderBytes,
			MaxSteps:       m.opts.MaxRenderSteps,
			Log:            m.templateLog,
		})
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

// renderBuffers are one worker's reusable render outputs.
type renderBuffers struct {
	subject, html, text []byte
	// header holds the dynamic header values one after the other; ends
	// their end offsets, headerVals the values, all cut from one string.
	header     []byte
	ends       []int
	headerVals []string
	data       program.Data
}

// renderFailure is why a recipient got no message: a Result reason.
type renderFailure struct {
	reason string
}

func (f *renderFailure) Error() string { return f.reason }

// render renders every template of t for one recipient into b, all parts
// together within budget bytes (the message size limit less what every
// message of the call carries): the render stops as soon as the parts
// would exceed it, so that a recipient never holds more than that in
// rendered text. A failure is returned as a *renderFailure whose reason is
// the recipient's Result reason, or, when ctx is done, as an error
// wrapping ctx's.
func (t *templates) render(ctx context.Context, b *renderBuffers, staticHeaders []Header, params, globals map[string]any, strict bool, budget int) error {
	if budget <= 0 {
		return &renderFailure{ReasonMessageTooLarge + ": the images, attachments and fixed headers leave no room for the rendered parts"}
	}
	b.data = program.Data{Params: params, Globals: globals, Missing: b.data.Missing[:0], MaxBytes: budget}
	var err error
	if b.subject, err = t.subject.Append(ctx, b.subject[:0], &b.data); err != nil {
		return renderError("subject", err, budget)
	}
	if bytes.ContainsAny(b.subject, "\r\n\x00") {
		return &renderFailure{ReasonHeaderInjection + ": subject"}
	}
	if t.html != nil {
		if b.html, err = t.html.Append(ctx, b.html[:0], &b.data); err != nil {
			return renderError("html", err, budget)
		}
	}
	if t.text != nil {
		if b.text, err = t.text.Append(ctx, b.text[:0], &b.data); err != nil {
			return renderError("text", err, budget)
		}
	}
	b.header, b.ends, b.headerVals = b.header[:0], b.ends[:0], b.headerVals[:0]
	for i, p := range t.headers {
		if p == nil {
			continue
		}
		start := len(b.header)
		if b.header, err = p.Append(ctx, b.header, &b.data); err != nil {
			return renderError(staticHeaders[i].Name, err, budget)
		}
		if bytes.ContainsAny(b.header[start:], "\r\n\x00") {
			return &renderFailure{ReasonHeaderInjection + ": " + staticHeaders[i].Name}
		}
		b.ends = append(b.ends, len(b.header))
	}
	if len(b.ends) > 0 {
		// One string for all the values, not one per header.
		all, start := string(b.header), 0
		for _, end := range b.ends {
			b.headerVals = append(b.headerVals, all[start:end])
			start = end
		}
	}
	if strict && len(b.data.Missing) > 0 {
		missing := slices.Clone(b.data.Missing)
		slices.Sort(missing)
		missing = slices.Compact(missing)
		return &renderFailure{ReasonMissingParam + ": " + strings.Join(missing, ", ")}
	}
	return nil
}

// renderError is the failure of rendering part: ctx's error, a message
// over budget, or a render error.
func renderError(part string, err error, budget int) error {
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	case errors.Is(err, program.ErrOverBudget):
		return &renderFailure{fmt.Sprintf("%s: the rendered parts exceed the %d bytes the message size limit leaves them (at %s)", ReasonMessageTooLarge, budget, part)}
	}
	return &renderFailure{ReasonRenderError + ": " + part + ": " + err.Error()}
}
