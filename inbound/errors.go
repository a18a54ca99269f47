package inbound

import (
	"errors"
	"fmt"
)

// ErrMessageTooLarge is returned by Handle for a message longer than
// Options.MaxMessageBytes; nothing was acted on. The server answers it
// with 552 5.3.4.
var ErrMessageTooLarge = errors.New("inbound: message too large")

// RecipientError is returned by Handle for an envelope recipient that is
// not one of the Receiver's addresses (a VERP address of Options.VERP, or
// one of Options.ReportLocals at its domain); the message was not read.
// The server answers it at RCPT: 550 5.1.1 for an unknown address of the
// domain, 550 5.7.1 for another domain (the Receiver is never a relay).
type RecipientError struct {
	Address string
	// OtherDomain is true when the address is not at Options.VERP.Domain.
	OtherDomain bool
}

// Error says which address was refused and why.
func (e *RecipientError) Error() string {
	if e.OtherDomain {
		return fmt.Sprintf("inbound: recipient %q is not at the bounce domain (relay denied)", e.Address)
	}
	return fmt.Sprintf("inbound: recipient %q is not a VERP or report address", e.Address)
}

// StoreError is returned by Handle when Options.Sends or
// Options.Suppressions failed: whether the report proves something could
// not be told or recorded, so the message should be offered again later
// (the server answers 451 4.3.0, and the sender's server retries). Err is
// the store's error.
type StoreError struct {
	Op  string // "look up send", "observe"
	Err error
}

// Error is the operation and the store's error.
func (e *StoreError) Error() string { return "inbound: " + e.Op + ": " + e.Err.Error() }

// Unwrap returns e.Err.
func (e *StoreError) Unwrap() error { return e.Err }
