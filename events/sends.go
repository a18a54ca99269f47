package events

import (
	"context"
	"time"
)

// Send is the record of one message that left: its send id (the
// Result's SendID, 32 lower-case hex digits), the account that sent it,
// its recipient's address as the call named it, its list, and when it
// was sent.
type Send struct {
	ID        string
	AccountID string
	Email     string
	// List is the list id of the message (its List-Id, lower-cased, as
	// postroom.Event.List has it), or "" for a transactional message: a
	// complaint about a list message silences the address's list mail, one
	// about a transactional message all its mail. A send recorded before
	// the store kept lists (events.SQL before schema version 2) has "".
	List string
	At   time.Time
}

// Sends looks up the record of the message whose send id is id, as a
// postroom Mailer's send events made it.
//
// Lookup returns the record and true; false and a nil error when no message
// with that id is recorded (never sent, or older than the store keeps);
// or an error when the store could not answer (a database that is down),
// in which case the caller should ask again later rather than conclude
// that the id is unknown. It must be safe for concurrent use, and ctx
// bounds the lookup.
type Sends interface {
	Lookup(ctx context.Context, id string) (Send, bool, error)
}
