package postroom

import (
	"context"
	"errors"
	"sync"

	"github.com/postroom/postroom/option"
)

// Mailer sends calls: it authenticates and validates them, renders every
// recipient's message and hands it to its Transport. A Mailer is safe for
// concurrent use. Its configuration (the Transport and the Options New
// checked) never changes after New, and each call's state lives in that
// call; what a Mailer keeps across calls, its render workers' buffers and
// a cache of compiled templates, never shows in what a call returns.
type Mailer struct {
	t      Transport
	opts   Options
	queued bool
	// workers pools the render workers' buffers across calls: a buffer
	// holds nothing from one recipient to the next.
	workers sync.Pool
	// cache holds compiled templates across calls (cache.go): a cached
	// template renders what compiling its source again would.
	cache templateCache
	// files holds checked and encoded images and attachments across calls
	// (filecache.go): a cached file is what checking and encoding its
	// content again would give.
	files fileCache
}

// New returns a Mailer that delivers through t. It validates opts and fills
// in the defaults of its zero fields.
func New(t Transport, opts Options) (*Mailer, error) {
	if t == nil {
		return nil, errors.New("postroom: New: nil Transport")
	}
	if opts.Auth == nil {
		return nil, option.Errorf(opNew, "Options.Auth", "is nil: use postroom.StaticKeys to check keys, or postroom.NoAuth{} if the application authenticates callers itself")
	}
	if err := opts.setDefaults(); err != nil {
		return nil, err
	}
	if err := opts.checkDeliverability(); err != nil {
		return nil, err
	}
	if err := opts.checkHelpers(); err != nil {
		return nil, err
	}
	m := &Mailer{t: t, opts: opts}
	if q, ok := t.(Queuer); ok && q.Queued() {
		m.queued = true
	}
	return m, nil
}

// Send is message.send: it sends call.Message's html and text to every
// recipient. It returns exactly one Result per recipient, in input order,
// or a call-level error and no results when the call is refused before
// anything is sent (ErrUnauthorized, ErrNoRecipients, ErrTooManyRecipients,
// *ValidationError, possibly several joined with errors.Join).
//
// When ctx is done mid-call, Send returns the full results (recipients not
// finished are deferred with reason canceled or timeout) together with
// ctx's error. When the transport reports ErrTransportUnusable, Send stops
// handing over messages and returns the full results (recipients not
// handed over are deferred, transport-unusable) together with that error.
func (m *Mailer) Send(ctx context.Context, call *Call) ([]Result, error) {
	return m.Run(ctx, OpSend, call, RunOptions{})
}

// SendTemplate is message.send_template: like Send, with the html and text
// bodies taken from Options.Templates by message.html_template_id and
// message.text_template_id, in the call's account.
func (m *Mailer) SendTemplate(ctx context.Context, call *Call) ([]Result, error) {
	return m.Run(ctx, OpSendTemplate, call, RunOptions{})
}

// made returns ErrZeroMailer when m was not made by New.
func (m *Mailer) made() error {
	if m == nil || m.t == nil {
		return ErrZeroMailer
	}
	return nil
}
