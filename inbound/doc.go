// Package inbound receives what comes back from the messages a postroom
// Mailer sent (bounces, delay notices, complaints, auto-replies), proves
// which send each is about, and records what it proves: events
// (hard_bounce, soft_bounce, spam, deferral) and observations for a
// suppression list.
//
// A Receiver serves SMTP (Serve: the MX of the VERP domain) and LMTP
// (ServeLMTP: a local Postfix's transport_maps hands it the VERP domain),
// on emersion/go-smtp's server, and Handle does the same for one message
// received otherwise (a Postfix pipe, an IMAP mailbox, a provider's
// inbound webhook). The server and Handle share one path: read the
// message with bounce.Parse, look its send up, apply.
//
// # Trust
//
// A report (any message) proves nothing about who it is for. The Receiver
// acts only on the recipient of a send that postroom recorded (events.Sends
// looks it up by send id), and only when the send id comes from where the
// Mailer put it: the VERP envelope sender, to which the report was
// delivered (or, for a feedback loop's fixed address, Options.ReportLocals,
// the send id in the returned headers). A send id is 128 random bits: only
// who saw the message knows it. The report must also name that recipient
// (Original-Recipient, Final-Recipient; case-insensitively): a report for
// a known send naming another address (a forged bounce, a bcc copy's
// bounce) acts on no one. Unknown or expired send ids are logged and
// dropped, with a 250 reply so that the sender's server does not retry,
// once Options.UnknownSendGrace (10 minutes) has passed since the
// Receiver first saw the id: until then a report for it is answered 451
// (Handle: VerdictRetryLater), since its send may not be written yet.
// Before that first answer, the message waits up to Options.SendWait (5
// seconds) for the send's record, looking it up again with backoff: a
// bounce that a local relay returns within milliseconds of the
// hand-over, before an events.Recorder wrote the send, is acted on at its
// first delivery. A send id that no instance handed over is never found,
// so the wait acts on nothing.
//
// # Limits
//
// The server takes RCPT only for its own addresses, never relays, and
// bounds each Serve call: Options.MaxMessageBytes (552 beyond, the
// message never held whole in memory), MaxRecipients, MaxConnections,
// ReadTimeout and WriteTimeout; the memory of unknown send ids by
// MaxUnknownSends; the wait for a send not recorded yet by SendWait per
// message and MaxSendWaits messages at once per Receiver. See Options
// for their defaults.
//
// # Concurrency
//
// A Receiver is safe for concurrent use: its options never change, its
// memory of unknown send ids is kept under a lock, and the messages
// waiting for their sends are counted in a channel of MaxSendWaits
// tokens. A wait runs in the goroutine handling its message and ends
// with it. Each connection is
// served by a goroutine of go-smtp's server, and Serve returns only after
// every one has ended. Options.OnEvent and the stores are called from
// those goroutines.
//
// It does not keep the messages it receives, forward them, or answer them.
package inbound
