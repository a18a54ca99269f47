package bounce

// Type says what kind of returned message a Report describes.
type Type string

// The types of Report. A message that is none of the others is TypeNone.
const (
	// TypeBounce: at least one recipient failed for good.
	TypeBounce Type = "bounce"
	// TypeDelay: only delayed recipients (a warning; delivery goes on).
	TypeDelay Type = "delay"
	// TypeComplaint: an ARF (RFC 5965) report or a provider's feedback loop.
	TypeComplaint Type = "complaint"
	// TypeAutoReply: an RFC 3834 automatic reply, a vacation or
	// out-of-office notice. Never a bounce, never Hard.
	TypeAutoReply Type = "auto-reply"
	// TypeDeliveryReport: every recipient was delivered, relayed or
	// expanded (a positive DSN).
	TypeDeliveryReport Type = "delivery-report"
	// TypeNone: not a report at all.
	TypeNone Type = "none"
)

// The actions of a Recipient, as RFC 3464 §2.3.3 names them. Every
// Recipient of a Report has one of these.
const (
	ActionFailed    = "failed"
	ActionDelayed   = "delayed"
	ActionDelivered = "delivered"
	ActionRelayed   = "relayed"
	ActionExpanded  = "expanded"
)

// The classes of a Recipient: stable kebab-case names, listed with their
// meaning in the package documentation. Hard is only ever true with
// ClassUserUnknown, ClassDomainUnknown and ClassMailboxDisabled.
const (
	ClassUserUnknown     = "user-unknown"
	ClassDomainUnknown   = "domain-unknown"
	ClassMailboxDisabled = "mailbox-disabled"
	ClassMailboxFull     = "mailbox-full"
	ClassSpamBlocked     = "spam-blocked"
	ClassPolicy          = "policy"
	ClassContent         = "content"
	ClassTooLarge        = "message-too-large"
	ClassExpired         = "expired"
	ClassNetwork         = "network"
	ClassTemporary       = "temporary"
	ClassOnHold          = "on-hold"
	ClassOther           = "other"
	ClassComplaint       = "complaint"
	ClassAutoReply       = "auto-reply"
	ClassDelivered       = "delivered"
)

// classes lists every class a Recipient may have, in the order of the
// package documentation's table.
var classes = []string{
	ClassUserUnknown, ClassDomainUnknown, ClassMailboxDisabled,
	ClassMailboxFull, ClassSpamBlocked, ClassPolicy, ClassContent,
	ClassTooLarge, ClassExpired, ClassNetwork, ClassTemporary,
	ClassOnHold, ClassOther, ClassComplaint, ClassAutoReply, ClassDelivered,
}

// Report is what Parse tells of one returned message. The zero Report is
// TypeNone's empty shape; Parse never returns nil without an error. A
// Report is plain data owned by the caller; its JSON form is part of the
// API.
type Report struct {
	// Type is the kind of message.
	Type Type `json:"type"`
	// Recipients are the recipients the message reports on, in the order
	// it names them; empty for TypeNone.
	Recipients []Recipient `json:"recipients"`
	// FeedbackType is an ARF report's Feedback-Type (abuse, fraud, virus,
	// other, not-spam, ...), lower case; empty otherwise.
	FeedbackType string `json:"feedback_type,omitempty"`
	// SendID is the 32 lower-case hex digits of postroom's VERP address
	// that the message shows (see SendIDFrom); empty when none. Parse does
	// not verify it: the receiver proves it.
	SendID string `json:"send_id,omitempty"`
	// ReportingMTA is the DSN's Reporting-MTA (without its "dns;" type),
	// or the host a non-standard bounce names; empty when none.
	ReportingMTA string `json:"reporting_mta,omitempty"`
	// Subject is the report's own Subject header, decoded.
	Subject string `json:"subject,omitempty"`
	// OriginalMessageID is the Message-ID of the returned message, when
	// the report includes its headers.
	OriginalMessageID string `json:"original_message_id,omitempty"`
	// Format names the recognizer that read the message: "rfc3464",
	// "rfc6533", "arf", "jmrp", "apple-unsubscribe", "ses-json",
	// "rfc3834", or an MTA family such as "qmail", "exim", "exchange",
	// "text" (the fallback). Informative only: not a stable API.
	Format string `json:"format,omitempty"`
}

// Recipient is one recipient a report speaks of.
type Recipient struct {
	// Address is the address the sender used: the DSN's
	// Original-Recipient, else its Final-Recipient, else what the text of
	// a non-standard bounce names.
	Address string `json:"address"`
	// Action is one of ActionFailed, ActionDelayed, ActionDelivered,
	// ActionRelayed, ActionExpanded.
	Action string `json:"action"`
	// Status is the enhanced status code (RFC 3463) such as "5.1.1": the
	// DSN's Status, else the code in the diagnostic, else the code the
	// class implies when the message shows none (see the package
	// documentation); "" for complaints, auto-replies and when nothing
	// can be told.
	Status string `json:"status"`
	// Hard means the address itself is dead: a failed recipient with a
	// 5.x.x status whose class is user-unknown, domain-unknown or
	// mailbox-disabled. Suppress it.
	Hard bool `json:"hard"`
	// Class is the cause, one of the Class constants.
	Class string `json:"class"`
	// Diagnostic is the remote server's text (the SMTP reply), or the
	// reporting server's own explanation, on one line.
	Diagnostic string `json:"diagnostic"`
	// RemoteMTA is the server that gave the diagnostic, when shown.
	RemoteMTA string `json:"remote_mta,omitempty"`
}
