package postroom

import (
	"bytes"
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
// A syntax error names the part and its position.
func (m *Mailer) compileTemplates(subject, html, text templateSource, headers []Header) (*templates, error) {
	t := &templates{headers: make([]*program.Program, len(headers)), headerStatic: make([]string, len(headers))}
	var errs []error
	compile := func(s templateSource, mode program.Mode) *program.Program {
		p, err := program.Compile(s.src, program.Options{
			Mode:           mode,
			MaxSourceBytes: m.opts.MaxTemplateBytes,
			MaxDepth:       m.opts.MaxTemplateDepth,
			MaxOutputBytes: m.opts.MaxRenderBytes,
			MaxSteps:       m.opts.MaxRenderSteps,
			Log:            m.templateLog,
		})
		if err != nil {
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
	header              []byte
	headerVals          []string
	data                program.Data
}

// render renders every template of t for one recipient into b. A failure
// is returned as an error carrying the recipient's outcome (see
// outcomeOf).
func (t *templates) render(b *renderBuffers, staticHeaders []Header, params, globals map[string]any, strict bool) error {
	b.data = program.Data{Params: params, Globals: globals, Missing: b.data.Missing[:0]}
	var err error
	if b.subject, err = t.subject.Append(b.subject[:0], &b.data); err != nil {
		return renderError("subject", err)
	}
	if bytes.ContainsAny(b.subject, "\r\n\x00") {
		return failed(invalid(ReasonHeaderInjection, "subject"))
	}
	if t.html != nil {
		if b.html, err = t.html.Append(b.html[:0], &b.data); err != nil {
			return renderError("html", err)
		}
	}
	if t.text != nil {
		if b.text, err = t.text.Append(b.text[:0], &b.data); err != nil {
			return renderError("text", err)
		}
	}
	b.headerVals = b.headerVals[:0]
	for i, p := range t.headers {
		if p == nil {
			continue
		}
		if b.header, err = p.Append(b.header[:0], &b.data); err != nil {
			return renderError(staticHeaders[i].Name, err)
		}
		v := string(b.header)
		if hasLineBreak(v) {
			return failed(invalid(ReasonHeaderInjection, staticHeaders[i].Name))
		}
		b.headerVals = append(b.headerVals, v)
	}
	if strict && len(b.data.Missing) > 0 {
		missing := slices.Clone(b.data.Missing)
		slices.Sort(missing)
		missing = slices.Compact(missing)
		return failed(invalid(ReasonMissingParam, strings.Join(missing, ", ")))
	}
	return nil
}

// renderError is the failure of a part's render: a limit passed, or an
// error the reason does not repeat (it may be a panic's text); the Mailer
// logs it.
func renderError(part string, err error) error {
	o := outcome{status: StatusInvalid, code: ReasonRenderError, detail: part, err: err, hidden: true}
	switch {
	case errors.Is(err, program.ErrOutputTooLarge):
		o.detail, o.hidden = part+": output over the render size limit", false
	case errors.Is(err, program.ErrTooManySteps):
		o.detail, o.hidden = part+": over the render step limit", false
	}
	return failed(o)
}
