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
// ReadTimeout and WriteTimeout, and the limits of the next section; the
// memory of unknown send ids by MaxUnknownSends; the wait for a send not
// recorded yet by SendWait per message and MaxSendWaits messages at once
// per Receiver; the log by MaxLogRepeats. See Options for their defaults.
//
// # The receiver on the internet
//
// As the MX of the VERP domain the server is open to anyone, so it bounds
// what a client can hold as Postfix's smtpd does; each limit, its
// default, and the Postfix parameter it mirrors:
//
//   - Options.ReadTimeout (5 minutes; smtpd_timeout with
//     smtpd_per_request_deadline = yes): each command line, from the end
//     of the previous reply to its end of line, and each DATA transfer or
//     BDAT chunk. A line cut by it is never run: the session ends.
//   - Options.StressReadTimeout (10 seconds; smtpd_timeout =
//     ${stress?{10}:{300}}s): every read, while four fifths of
//     MaxConnections are open, so that idle connections make room.
//   - When every slot is taken and a new client connects, the connection
//     that has waited longest for its next command, a second at least,
//     gives its slot up (421 4.4.2) and the new client is greeted at
//     once; with none idle so long, the client waits for a slot. Postfix
//     has no such rule (its stress timeout only shortens the wait): it
//     keeps idle connections from many addresses from holding a bounce
//     back.
//   - Options.MaxSessionTime (20 minutes; Postfix has none): a whole
//     connection, however busy.
//   - Options.MaxConnectionsPerClient (half of MaxConnections;
//     smtpd_client_connection_count_limit): connections from one IP
//     address; one more is refused at once.
//   - Options.MaxJunkCommands (100; smtpd_junk_command_limit): commands
//     that carry no mail between two messages taken. Not counted after
//     STARTTLS, where MaxSessionTime bounds them.
//   - Command lines up to 2,048 octets (line_length_limit); message lines
//     of any length up to MaxMessageBytes, as Postfix takes them.
//   - Options.MaxLogRepeats (10 a minute; Postfix leaves it to syslog):
//     lines with the same message logged.
//
// A session the server ends gets a fixed reply (421 4.4.2 for a timeout,
// 421 4.7.0 for too many connections or junk commands), then is closed;
// no reply carries the text of an internal error.
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
