package postroom

import "github.com/postroom/postroom/delivery"

// The delivery contract lives in package delivery, which imports nothing
// of this package, so that a Transport's implementation (package
// transport, or an application's own) links none of the template engine
// or the MIME writer. The names below are aliases: the same types, with
// the same methods, documentation and JSON form.

// Envelope is delivery.Envelope: one message ready for delivery, the SMTP
// envelope (From, To) and the complete message (Data), with its SendID.
type Envelope = delivery.Envelope

// Transport is delivery.Transport, the one-method interface the Mailer
// hands each message to, as http.Client hands requests to an
// http.RoundTripper. Its documentation is the contract: concurrency, ctx,
// who owns the Envelope's bytes, and what nil, a *PartialError, a
// *DeliveryError, any other error and ErrTransportUnusable mean.
type Transport = delivery.Transport

// TransportFunc is delivery.TransportFunc: an ordinary function as a
// Transport.
type TransportFunc = delivery.TransportFunc

// Queuer is delivery.Queuer, implemented by transports that accept
// messages for delivery later, such as a spool or a pickup folder. When
// Queued reports true, the Mailer reports accepted messages with
// StatusQueued instead of StatusSent.
type Queuer = delivery.Queuer
