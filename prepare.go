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
	op         Operation
	tpl        *templates
	skel       *mimemsg.Skeleton
	from       string // envelope reverse path
	fromDomain string
	bcc        []string
	ids        cipher.Block // send ids: AES of (nonce, index), unique within the call
	nonce      uint64
	// results holds one Result per recipient: filled in by checkRecipients
	// for the recipients refused whatever their params, by the run loop
	// (or Preview) for the others.
	results []Result
	// normalized holds the address of the few recipients whose address for
	// SMTP differs from their email with spaces trimmed (an IDN or
	// upper-case domain). Written by checkRecipients, read-only after.
	normalized map[int]string
	hooks      RunOptions // the call's hooks; zero for Preview
	dkim       *dkimCall  // nil: messages are not signed
	genText    bool       // the text part is generated from the html
	// unsubscribe is the index among the dynamic header values of a
	// List-Unsubscribe value checked per recipient (one-click), or -1.
	unsubscribe int
}

// prepare makes the job of call, run as op, in a straight line, each step
// in its own file:
//
//  1. authenticate (Options.Auth);
//  2. validate (validate.go): everything the call's own fields decide,
//     recipients included; a call with no usable structure stops here;
//  3. compile and link: the bodies (store.go, looked up for
//     message.send_template), every template compiled (render.go, through
//     cache.go) and the partials they name linked (partials.go);
//  4. lay out (mime.go): what every message shares, and the checks only
//     the layout can make (cid references, header values, one-click
//     unsubscribe);
//  5. draw the call's keys (sendid.go), stamp its Date and set up its
//     signing (dkim.go);
//  6. build the skeleton every message is appended from
//     (internal/mimemsg).
//
// A call stopped in step 2 (count, structure) or by its stored bodies in
// step 3 gets those errors alone; otherwise the problems steps 2 to 4 find
// are reported together, the templates' first.
func (m *Mailer) prepare(ctx context.Context, op Operation, call *Call) (*job, error) {
	if err := m.opts.Auth.Authenticate(ctx, call.AccountID, call.Key); err != nil {
		if errors.Is(err, ErrUnauthorized) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %w", ErrUnauthorized, err)
	}
	j := &job{m: m, call: call, op: op}
	c, err := j.validate()
	if err != nil {
		return nil, err
	}

	msg := &call.Message
	html, text, err := m.bodies(ctx, op, call)
	if err != nil {
		return nil, err
	}
	var errs []error
	j.tpl, err = m.compileTemplates(ctx, templateSource{"message.subject", msg.Subject}, html, text, msg.Headers)
	if err == nil {
		err = m.linkPartials(ctx, call.AccountID, j.tpl, j.tpl.roots("message.subject", html.field, text.field))
	}
	if err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, c.problems...)

	layout, lerrs := j.layout(html, text, c)
	if errs = append(errs, lerrs...); len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if err := j.suppress(ctx); err != nil { // suppressions.go
		return nil, err
	}

	var boundaries io.Reader
	if j.ids, j.nonce, boundaries, err = drawCallKeys(m.opts.Rand); err != nil {
		return nil, err
	}
	layout.Date = m.opts.Now()
	if j.skel, err = mimemsg.New(layout, boundaries); err != nil {
		return nil, err
	}
	j.dkim = newDKIMCall(m.opts.DKIM, layout, j.skel)
	if n := j.skel.StaticSize(); n > m.opts.MaxMessageBytes {
		return nil, &ValidationError{Field: "message", Reason: fmt.Sprintf("images and attachments alone make %d bytes, over the %d-byte message limit", n, m.opts.MaxMessageBytes)}
	}
	return j, nil
}
