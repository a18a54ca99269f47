package postroom

// What a queue of calls sent later reports about them beyond CallStatus:
// the recipients still waiting, and an account's calls. The root package
// never makes these: they are declared here, as CallStatus is, so that a
// queue (package outbox) and an HTTP handler (package httpapi) share them
// without importing each other.

import "time"

// WaitingState is why a recipient of a call sent later has no final
// result yet: WaitingNew, WaitingSending or WaitingDeferred.
type WaitingState string

// The states of a waiting recipient.
const (
	// WaitingNew: not tried yet (its job has not reached it).
	WaitingNew WaitingState = "new"
	// WaitingSending: an attempt of its job reserved it and may be
	// handing its message over now; the attempt writes its outcome.
	WaitingSending WaitingState = "sending"
	// WaitingDeferred: its last attempt was refused for now (LastStatus
	// and LastReason say how); its job tries it again at NextAttempt.
	WaitingDeferred WaitingState = "deferred"
)

// WaitingRecipient is a recipient of a call sent later that has no final
// result yet, as a queue reports it (package outbox's Waiting). Its JSON
// form has the fields' snake_case names; next_attempt is absent when
// unknown, and last_status, last_code and last_reason when empty.
type WaitingRecipient struct {
	// Index is the recipient's index in the call's recipients.
	Index int    `json:"index"`
	Email string `json:"email"`
	// State says why it has no final result.
	State WaitingState `json:"state"`
	// LastStatus and LastReason are the last attempt's status and reason,
	// for a deferred recipient ("deferred", "soft-bounce: 451 4.7.1
	// greylisted"); empty otherwise. LastCode is the reason's code.
	LastStatus string `json:"last_status,omitempty"`
	LastCode   string `json:"last_code,omitempty"`
	LastReason string `json:"last_reason,omitempty"`
	// Attempts is the number of attempts so far: for package outbox, the
	// attempts of the recipient's job (see outbox.Outbox.Waiting), an upper
	// bound on the recipient's own attempts.
	Attempts int `json:"attempts"`
	// NextAttempt is when the recipient is tried next, nil when unknown
	// (while it is being tried, or when nothing will try it again).
	NextAttempt *time.Time `json:"next_attempt,omitempty"`
}

// CallSummary is one call sent later as a queue lists it (package
// outbox's Calls; httpapi's calls.list). Its JSON form is {"id",
// "operation", "started_at", "recipients", "state", "counts"}.
type CallSummary struct {
	// ID is the call's id, as its queue gave it.
	ID string `json:"id"`
	// Operation is the spec's name of the call's operation
	// ("message.send" or "message.send_template").
	Operation string `json:"operation"`
	// StartedAt is the call's start: its enqueue, or its send time when
	// later.
	StartedAt time.Time `json:"started_at"`
	// Recipients is the number of recipients of the call.
	Recipients int `json:"recipients"`
	// List is the call's list, or "" for a transactional call (as
	// CallStatus.List).
	List string `json:"list,omitempty"`
	// State and Counts mean what CallStatus's do: a recipient without a
	// final result yet counts as StatusQueued.
	State  CallState      `json:"state"`
	Counts map[Status]int `json:"counts"`
}
