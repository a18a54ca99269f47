package postroom

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/postroom/postroom/internal/program"
)

// TemplateError is the error of Mailer.CheckTemplate for a source that
// does not compile: where, and why. It wraps ErrTemplateSyntax.
type TemplateError struct {
	// Line and Column are the position of the problem, from 1 (the column
	// counts bytes from the start of the line); both 0 when the problem has
	// no position, such as a source over Options.MaxTemplateBytes.
	Line, Column int
	// Reason says what is wrong, in lower case, without the position.
	Reason string
}

func (e *TemplateError) Error() string {
	if e.Line > 0 {
		return "postroom: template error at line " + strconv.Itoa(e.Line) + ", column " + strconv.Itoa(e.Column) + ": " + e.Reason
	}
	return "postroom: template error: " + e.Reason
}

// Unwrap returns ErrTemplateSyntax.
func (e *TemplateError) Unwrap() error { return ErrTemplateSyntax }

// CheckTemplate compiles source as the Mailer compiles a call's stored
// templates (its helpers and limits, Options.Helpers and
// Options.MaxTemplateBytes among them) and returns nil when it compiles,
// so that a template store can refuse a template on save rather than a
// call refusing it later.
//
// A source that does not compile gives a *TemplateError, which wraps
// ErrTemplateSyntax; a done ctx gives ctx's error. The partials source
// names ({{> footer}}) are not looked up: they may be stored after it, and
// a template stored to be a partial may render {{> @partial-block}}. A
// call that uses source checks them.
//
// A source that compiles is kept in the Mailer's cache of compiled
// templates, as a call's would be, so the next call using it compiles
// nothing.
func (m *Mailer) CheckTemplate(ctx context.Context, source string) error {
	if err := m.made(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	_, err := m.compile(ctx, source, program.HTML)
	if err == nil {
		return nil
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	var pe *program.Error
	if errors.As(err, &pe) {
		return &TemplateError{Line: pe.Line, Column: pe.Column, Reason: pe.Msg}
	}
	return &TemplateError{Reason: err.Error()}
}

// TemplateSample is a template to render with Mailer.RenderTemplate, as
// one recipient with Params would get it.
type TemplateSample struct {
	// AccountID and Key are checked by Options.Auth as a call's are; the
	// partials the sources name are looked up in AccountID's templates.
	AccountID string
	Key       string
	// Subject is a subject template; empty renders an empty subject.
	Subject string
	// HTML and Text are the template sources, at least one of them, as a
	// message.send call's message.html and message.text.
	HTML, Text string
	// Params are the recipient's params (a call's recipients[0].params);
	// nil renders every param missing.
	Params Params
}

// Sample addresses of the call RenderTemplate previews: names that can
// never be a real mailbox (RFC 2606's example.com).
const (
	sampleFrom = "sample-sender@example.com"
	sampleTo   = "sample-recipient@example.com"
)

// RenderTemplate renders s as Mailer.Preview renders a message.send call
// of one recipient whose message has s's subject, html, text and params,
// and returns that recipient's preview: the rendered Subject, HTML and
// Text (a text generated from the html when the Mailer's Options make
// one), the Missing params and the Result the recipient would get. Nothing
// is sent.
//
// The errors are Preview's: ErrUnauthorized, and *ValidationError (joined
// when there are several) naming message.subject, message.html or
// message.text for a source that does not compile or a partial not
// found. A done ctx gives ctx's error.
func (m *Mailer) RenderTemplate(ctx context.Context, s TemplateSample) (*PreviewRecipient, error) {
	call := &Call{
		AccountID:  s.AccountID,
		Key:        s.Key,
		Message:    Message{FromEmail: sampleFrom, Subject: s.Subject, HTML: s.HTML, Text: s.Text},
		Recipients: []Recipient{{Email: sampleTo, Params: s.Params}},
	}
	p, err := m.Preview(ctx, OpSend, call, PreviewOptions{})
	if err != nil {
		return nil, err
	}
	if len(p.Recipients) != 1 {
		return nil, fmt.Errorf("postroom: RenderTemplate: %d recipients previewed, want 1", len(p.Recipients))
	}
	return &p.Recipients[0], nil
}
