package postroom

import (
	"context"
	"fmt"
)

// Validate runs the checks that Run makes before it renders anything, and
// sends nothing: call-level checks (the same errors as Send and
// SendTemplate, such as ErrUnauthorized, ErrNoRecipients or a
// *ValidationError) and then the per-recipient checks of addresses, names
// and duplicates, and the lookup in Options.Suppressions. It returns one
// Result per recipient, in input order: the invalid Result Run would give
// a recipient refused by those checks, the rejected Result of one the
// suppression list holds, and the zero Result (empty Status) for every
// other recipient, whose outcome is only known when its message is made
// and handed over.
//
// It is for callers that send a call later, or in parts (package outbox):
// they refuse bad input at once, with Send's errors. Like Run, it never
// modifies call.
func (m *Mailer) Validate(ctx context.Context, op Operation, call *Call) ([]Result, error) {
	if err := m.made(); err != nil {
		return nil, err
	}
	switch op {
	case OpSend, OpSendTemplate:
	default:
		return nil, fmt.Errorf("postroom: Validate: unknown operation %d", int(op))
	}
	if call == nil {
		return nil, &ValidationError{Field: "call", Reason: "nil"}
	}
	j, err := m.prepare(ctx, op, call)
	if err != nil {
		return nil, err
	}
	return j.results, nil
}
