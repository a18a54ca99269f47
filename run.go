package postroom

import (
	"context"
	"fmt"
)

// Operation is one of the spec's two operations.
type Operation int

const (
	// OpSend is message.send: the bodies are in the call.
	OpSend Operation = iota
	// OpSendTemplate is message.send_template: the bodies come from
	// Options.Templates.
	OpSendTemplate
)

// String returns the spec's name of the operation.
func (op Operation) String() string {
	switch op {
	case OpSend:
		return "message.send"
	case OpSendTemplate:
		return "message.send_template"
	}
	return fmt.Sprintf("postroom.Operation(%d)", int(op))
}

// RunOptions are a call's settings beside its body. The zero value runs
// the call as Send and SendTemplate do.
type RunOptions struct {
	// OnResult, when not nil, receives each recipient's Result as soon as
	// it is final: i is the recipient's index in call.Recipients and r the
	// Result that Run returns at that index. It is called exactly once per
	// recipient, before Run returns, when the call gets past its
	// call-level checks (a call refused as a whole reports nothing).
	//
	// It is called from the goroutine that called Run (for recipients
	// found invalid before any rendering, and for those left when the call
	// stops early) and from the call's workers, concurrently: it must be
	// safe for concurrent use. A worker waits for it before taking the next
	// recipient, so a slow OnResult slows the call; hand slow work (a
	// database write, a network stream) to a goroutine of your own or
	// batch it.
	OnResult func(i int, r Result)

	// BeforeSend, when not nil, is called with recipient i's send id just
	// before its message is handed to the transport, from the worker that
	// hands it over. An error keeps the message back: the recipient is
	// deferred with reason not-sent and Result.Err holds the error. Use it
	// to record durably that a message is about to leave (so that after a
	// crash it is known to be possibly sent), or to rate-limit.
	BeforeSend func(ctx context.Context, i int, sendID string) error
}

// Run runs call as operation op with the per-call settings o. Send and
// SendTemplate are Run with zero RunOptions; its results and errors are
// theirs.
func (m *Mailer) Run(ctx context.Context, op Operation, call *Call, o RunOptions) ([]Result, error) {
	switch op {
	case OpSend, OpSendTemplate:
	default:
		return nil, fmt.Errorf("postroom: Run: unknown operation %d", int(op))
	}
	return m.send(ctx, call, op == OpSendTemplate, &o)
}
