package delivery

import "context"

// Envelope is one message ready for delivery: the SMTP envelope and the
// complete message.
type Envelope struct {
	// SendID is the 32-hex-character id the Mailer reports for this message;
	// it is also the local part of the Message-ID header.
	SendID string
	// From is the reverse path (SMTP MAIL FROM), an ASCII address.
	From string
	// To is the recipient followed by the bcc addresses (SMTP RCPT TO), in
	// that order. Domains are in A-label (ASCII) form.
	To []string
	// Data is the complete RFC 5322 message: CRLF line endings, no line over
	// 998 octets, 7-bit clean, not dot-stuffed.
	Data []byte
}

// Transport delivers messages. It plays the role of http.RoundTripper: the
// Mailer (postroom.Mailer) builds each message and hands it to Send.
//
// Send must be safe for concurrent use by multiple goroutines: the Mailer
// calls it from up to postroom.Options.Concurrency goroutines at once.
//
// Send must honour ctx: when ctx is done it returns promptly with an error
// wrapping ctx.Err() (inside a DeliveryError of kind DeliveryUncertain if the
// message may have been delivered all the same).
//
// The Envelope and Data belong to the caller. Send must not modify them and
// must not keep any of them after it returns: the Mailer reuses Data's
// memory for the next message.
//
// A nil error means the next hop accepted the message for every address in
// env.To. A *PartialError means it accepted it for env.To[0] and refused the
// addresses it lists. A *DeliveryError says how delivery failed (its Kind:
// permanent, uncertain, or temporary). Any other error counts as a temporary failure:
// nothing was delivered and retrying is safe. An error wrapping
// ErrTransportUnusable stops the whole call.
type Transport interface {
	Send(ctx context.Context, env *Envelope) error
}

// TransportFunc adapts an ordinary function to the Transport interface.
type TransportFunc func(ctx context.Context, env *Envelope) error

// Send calls f(ctx, env).
func (f TransportFunc) Send(ctx context.Context, env *Envelope) error { return f(ctx, env) }

// Queuer is implemented by transports that accept messages for delivery
// later, such as a spool or a pickup folder. When Queued reports true, the
// Mailer reports accepted messages with status queued (postroom.StatusQueued)
// instead of sent.
type Queuer interface {
	Queued() bool
}
