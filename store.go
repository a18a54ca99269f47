package postroom

import (
	"context"
	"errors"
	"fmt"
)

// TemplateStore holds stored templates for SendTemplate, and the partials
// that templates name ({{> footer}} is template footer of the call's
// account).
//
// Template returns the source of template id in account accountID. A store
// must scope ids by account: one account never reaches another's templates.
// A missing template returns an error wrapping ErrTemplateNotFound; any other
// error is reported to the caller as is. Template must be safe for concurrent
// use and honour ctx. The package templatestore has implementations.
type TemplateStore interface {
	Template(ctx context.Context, accountID, id string) (string, error)
}

// bodies returns the html and text templates of call run as op: the
// call's own for message.send, the stored ones named by their ids for
// message.send_template, looked up in Options.Templates. A template not
// found fails the call with a ValidationError naming its id's field, any
// other store error with that error.
func (m *Mailer) bodies(ctx context.Context, op Operation, call *Call) (html, text templateSource, err error) {
	msg := &call.Message
	if op != OpSendTemplate {
		return templateSource{"message.html", msg.HTML}, templateSource{"message.text", msg.Text}, nil
	}
	var errs []error
	get := func(field, id string) templateSource {
		if id == "" {
			return templateSource{field: field}
		}
		if m.opts.Templates == nil {
			errs = append(errs, &ValidationError{Field: field, Reason: "no template store is configured (Options.Templates)", Err: ErrTemplateNotFound})
			return templateSource{field: field}
		}
		src, err := m.opts.Templates.Template(ctx, call.AccountID, id)
		switch {
		case errors.Is(err, ErrTemplateNotFound):
			errs = append(errs, &ValidationError{Field: field, Reason: fmt.Sprintf("template %q not found", id) + emptyAccountHint(call.AccountID), Err: err})
		case err != nil:
			errs = append(errs, fmt.Errorf("postroom: template store: %s %q: %w", field, id, err))
		case src == "":
			errs = append(errs, &ValidationError{Field: field, Reason: fmt.Sprintf("template %q is empty", id)})
		}
		return templateSource{field, src}
	}
	html = get("message.html_template_id", msg.HTMLTemplateID)
	text = get("message.text_template_id", msg.TextTemplateID)
	return html, text, errors.Join(errs...)
}

// emptyAccountHint is what a missing stored template or partial's reason
// adds when the call's account_id is empty: stores keep templates per
// account, so the account, not the template, is what the caller forgot.
func emptyAccountHint(accountID string) string {
	if accountID != "" {
		return ""
	}
	return ": the call's account_id is empty, and templates and partials are stored per account"
}
