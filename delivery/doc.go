// Package delivery holds the contract between a Mailer (package postroom)
// and whatever delivers its messages: the Envelope handed over, the
// one-method Transport interface, and the errors through which a
// Transport says how delivery failed (DeliveryError, PartialError,
// ErrTransportUnusable).
//
// The root package postroom declares every name here again as an alias
// (postroom.Envelope is delivery.Envelope, postroom.Transport is
// delivery.Transport, and so on), so callers use either. Implementations
// of Transport (package transport, or an application's own) import this
// package alone and link none of postroom's template engine or MIME
// writer.
//
// This package does not deliver, queue or classify anything: it is the
// types and their documentation. How the Mailer turns a Transport's error
// into a recipient's status and reason is the root package's concern.
//
// From the module it imports only internal/replytext, the one rule for
// the text of a next hop's reply, which imports only the standard library.
package delivery
