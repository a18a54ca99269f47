package postroom

import (
	"context"
	"crypto/cipher"
	"errors"
	"fmt"
	"io"

	"github.com/postroom/postroom/internal/mimemsg"
)

// job is one call, prepared: everything that is the same for every
// recipient, computed once and read-only while the workers run.
type job struct {
	m          *Mailer
	call       *Call
	tpl        *templates
	skel       *mimemsg.Skeleton
	from       string // envelope reverse path
	fromDomain string
	bcc        []string
	ids        cipher.Block // send ids: AES of (nonce, index), unique within the call
	nonce      uint64
	// normalized holds the address of the few recipients whose address for
	// SMTP differs from their email with spaces trimmed (an IDN or
	// upper-case domain). Written by checkRecipients, read-only after.
	normalized map[int]string
	// onResult and beforeSend are the call's RunOptions hooks, or nil.
	onResult   func(i int, r Result)
	beforeSend func(ctx context.Context, i int, sendID string) error
	dkim       *dkimCall // nil: messages are not signed
	genText    bool      // the text part is generated from the html
	// unsubscribe is the index among the dynamic header values of a
	// List-Unsubscribe value checked per recipient (one-click), or -1.
	unsubscribe int
}

// prepare runs every call-level check, in order: auth, recipient count,
// message structure, templates, files, cid references, headers, bcc.
func (m *Mailer) prepare(ctx context.Context, call *Call, stored bool) (*job, error) {
	if err := m.opts.Auth.Authenticate(ctx, call.AccountID, call.Key); err != nil {
		if errors.Is(err, ErrUnauthorized) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %w", ErrUnauthorized, err)
	}
	switch n := len(call.Recipients); {
	case n == 0:
		return nil, ErrNoRecipients
	case n > m.opts.MaxRecipients:
		return nil, fmt.Errorf("%w: %d, at most %d", ErrTooManyRecipients, n, m.opts.MaxRecipients)
	}
	msg := &call.Message
	j := &job{m: m, call: call}
	if err := j.checkStructure(msg, stored); err != nil {
		return nil, err
	}

	html := templateSource{"message.html", msg.HTML}
	text := templateSource{"message.text", msg.Text}
	if stored {
		var errs []error
		html, text, errs = m.lookupTemplates(ctx, call)
		if len(errs) > 0 {
			return nil, errors.Join(errs...)
		}
	}
	var errs []error
	tpl, err := m.compileTemplates(ctx, templateSource{"message.subject", msg.Subject}, html, text, msg.Headers)
	if err != nil {
		errs = append(errs, err)
	} else if err := m.linkPartials(ctx, call.AccountID, tpl, tpl.roots("message.subject", html.field, text.field)); err != nil {
		errs = append(errs, err)
	}
	j.tpl = tpl

	layout := j.layout(html, text)
	j.genText = m.generatesText(layout.HasHTML, layout.HasText)
	layout.HasText = layout.HasText || j.genText
	var ferrs []error
	layout.Images, layout.Attachments, ferrs = decodeFiles(msg, m.opts.MaxMessageBytes)
	errs = append(errs, ferrs...)
	errs = append(errs, checkCIDs(html, msg.Images)...)
	herrs := checkHeaders(msg.Headers, m.opts.MaxHeaders)
	errs = append(errs, herrs...)
	j.unsubscribe = -1
	if len(herrs) == 0 {
		var uerrs []error
		j.unsubscribe, uerrs = checkUnsubscribe(msg.Headers, tpl)
		errs = append(errs, uerrs...)
	}
	if tpl != nil && len(herrs) == 0 {
		layout.Headers = customHeaders(msg.Headers, tpl)
		errs = append(errs, checkStaticValues(layout.Headers)...)
	}
	if j.bcc, err = parseBCC(msg.BCC, m.opts.MaxBCC); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}

	var boundaries io.Reader
	if j.ids, j.nonce, boundaries, err = drawCallKeys(m.opts.Rand); err != nil {
		return nil, err
	}
	layout.Date = m.opts.Now()
	j.skel, err = mimemsg.New(layout, boundaries)
	if err != nil {
		return nil, err
	}
	j.dkim = newDKIMCall(m.opts.DKIM, layout, j.skel)
	if n := j.skel.StaticSize(); n > m.opts.MaxMessageBytes {
		return nil, &ValidationError{Field: "message", Reason: fmt.Sprintf("images and attachments alone make %d bytes, over the %d-byte message limit", n, m.opts.MaxMessageBytes)}
	}
	return j, nil
}
