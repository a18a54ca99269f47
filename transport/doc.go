// Package transport provides implementations of delivery.Transport
// (postroom.Transport is the same interface), the one-method interface
// through which a postroom.Mailer hands each built message over for
// delivery.
//
//   - SMTP (NewSMTP) delivers to a mail server: a relay, a smarthost or a
//     local MTA. Its Check runs one session set-up, so that an
//     application finds a wrong password or a relay without STARTTLS at
//     start.
//   - Dir writes each message as <send_id>.eml into a folder, for previews,
//     development and tests, with no server at all.
//   - Memory records the envelopes it is given, for tests and previews; it
//     plays the role httptest.ResponseRecorder plays for HTTP handlers.
//
// Every transport here is safe for concurrent use, honours its ctx, and
// copies what it needs from the Envelope before Send returns, as the
// delivery.Transport contract requires. The package transporttest checks
// that contract for any Transport.
//
// Dir and Memory are final destinations: a message they accept is reported
// sent, not queued, since nothing will deliver it later.
//
// This package does not queue, retry or sign messages; a Transport that
// wraps another can add those.
//
// From the module it imports only delivery (the contract: Envelope,
// Transport and the errors a Transport returns), and internal/replytext,
// the rule for a reply's text that it shares with postroom. It does not
// import postroom, so a program that only delivers links no template
// engine or MIME writer; the postroom package never imports it either,
// and knows a Transport only by its interface.
package transport
