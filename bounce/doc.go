// Package bounce reads returned mail: bounces (non-delivery reports),
// delay warnings, complaints, automatic replies and delivery reports, and
// tells for each recipient what happened, why, and whether the address
// itself is dead.
//
// Parse reads one message and returns a Report. It understands, in this
// order:
//
//   - RFC 5965 abuse reports (ARF): multipart/report;
//     report-type=feedback-report. TypeComplaint, one recipient per
//     Original-Rcpt-To (else the returned message's To), class complaint.
//     Also Microsoft's JMRP reports (X-HmXmrOriginalRecipient), Apple
//     Mail's unsubscribe messages (X-Apple-Unsubscribe: true, feedback
//     type "unsubscribe") and Amazon SES notifications mailed as JSON
//     (bounces, complaints and deliveries).
//   - RFC 3464 delivery status notifications and RFC 6533 global ones
//     (message/delivery-status, message/global-delivery-status): a
//     recipient per block, its address the Original-Recipient when it is
//     a plain address, else the Final-Recipient (xtext and utf-8-addr
//     escapes decoded). A report without Diagnostic-Code takes the
//     remote server's reply from its human-readable part. A report
//     quoted in a text body, or whose multipart boundaries are gone, is
//     read from the text; a mail system's report that names no recipient
//     but returns another report (a filter that could not pass a bounce
//     on) is read from the returned report's delivery status.
//   - RFC 3834 automatic replies (Auto-Submitted: auto-replied,
//     X-Autoreply, Precedence: auto_reply, out-of-office subjects in
//     common languages): TypeAutoReply, never a bounce, never Hard, unless
//     the message is from a mail system or has a bounce's subject.
//   - The non-standard shapes real servers send, each family in a file
//     mta_<family>.go: qmail, Exim, Postfix, Sendmail, Exchange and
//     Office 365, Gmail, Yahoo, AOL, Amazon SES, Domino/Notes, Courier,
//     MailEnable, IMail, GroupWise, Mimecast, Zoho, Messaging Server,
//     MailMarshal, the qmail rewordings (X4), MDaemon, Kerio, NetMail,
//     the DragonFly Mail Agent, the Japanese carriers (KDDI, docomo,
//     au one net), Verizon, fml's refusals of a list post (known by its
//     X-MLServer and Message-ID), and the phrases many others share. A
//     message is read this way when
//     it is from a mail system (MAILER-DAEMON, postmaster, Mail Delivery
//     Subsystem, ...), has a bounce's subject, or carries a family's
//     boilerplate. The failed recipients are the addresses the family's
//     section names, each with the text that follows it, in which the
//     remote server's reply is found; when no family is known, the whole
//     text is scanned the same way. X-Failed-Recipients (Exim, Google),
//     when present, names the recipients. Exim's "(generated from X)"
//     and Postfix's "(expanded from <X>)" make X the address used.
//
// A message's lines may end in CRLF, LF, CR alone (old Mac OS mail
// files), CR CR LF, or a mix of these, in its raw form and in its
// decoded parts: every one is read as the same line end, so line ends
// never change the Report.
//
// # Classes
//
// Each failed or delayed recipient has a class, from its diagnostic
// text first (the remote server's reply), then from its enhanced status
// code (RFC 3463 and the IANA registry), then from its status's first
// digit. The text wins over the code because many servers send 5.0.0 or
// 5.5.0 for an unknown user and some send 5.1.1 for a block; within the
// text, blocks, policy, content and size are looked for before the
// causes that make an address dead, so that a reply that speaks of both
// is never called hard.
//
//	class              Hard  meaning                                        codes
//	user-unknown       yes   no such mailbox                                X.1.1, X.1.3
//	domain-unknown     yes   no such domain, no mail exchanger              X.1.2, X.1.10
//	mailbox-disabled   yes   disabled, suspended, expired or moved account  X.2.1, X.1.6
//	mailbox-full       no    over quota                                     X.2.2
//	spam-blocked       no    judged spam, sender IP or domain blocklisted   (text)
//	policy             no    DMARC/SPF/DKIM, relay denied, rate limits,     X.7.x, X.1.7, X.1.8
//	                         greylisting, other refusals
//	content            no    virus, forbidden attachment, content refused   X.6.x
//	message-too-large  no    the message exceeds a size limit               X.2.3, X.3.4
//	expired            no    queue lifetime exceeded, gave up retrying      X.4.7, and a
//	                         (a failed recipient with a 4.x.x network       failed 4.x.x
//	                         or unknown cause)
//	network            no    no route, connection refused or timed out,     X.4.x
//	                         temporary DNS failure
//	temporary          no    another 4.x.x
//	on-hold            no    held by the receiving system ("on hold")
//	other              no    a failure whose cause cannot be told
//	complaint          no    an ARF report (Action delivered)
//	auto-reply         no    an automatic reply (its From, Action delivered)
//	delivered          no    delivered, relayed or expanded
//
// Hard is true only for a failed recipient (Action failed) with a 5.x.x
// status whose class is one of the first three: calling a good address
// dead silences it, so a 4.x.x, a delay, a block, a policy or content
// refusal, a size limit or an uncertain cause is never Hard. An unknown
// user is Hard only when it is sure: the status says so (X.1.1, X.1.0,
// X.1.6), or the server answered RCPT TO (the text shows the command:
// "in reply to RCPT TO command", Yahoo's "[RCPT_TO]"), or the words are
// those a system uses only of missing mailboxes (qmail's "no mailbox
// here by that name", Exchange's RecipNotFound, Domino's "not listed in
// Domino Directory", La Poste's "Adresse destinataire invalide", Mail.ru's
// "Local mailbox ... is unavailable: user not found", ...), or
// the reporting MTA says so itself (PowerMTA's X-PowerMTA-BounceCategory
// bad-mailbox, bad-domain, inactive-mailbox; Symantec Email
// Security.cloud's "No such user" and "542 ... Rejected" for an
// unregistered address). A generic code (5.0.0, 5.2.1, 5.5.0, a bare
// 550) after DATA or with no command shown is a filter's refusal as
// often as a missing mailbox: soft, class user-unknown; so is a "user
// unknown" that names no address ("550 : User unknown", KDDI au's filter
// refusing the sender). A refusal at MAIL FROM concerns the sender: class
// policy. Blocks named around the reply in a non-standard bounce, and a
// report's own words for a full mailbox or disk ("Not enough disk
// space"), make it soft too.
//
// When a message gives no enhanced status code for a failed or delayed
// recipient, Status is the one its class implies (user-unknown 5.1.1,
// domain-unknown 5.1.2, mailbox-disabled 5.2.1, mailbox-full X.2.2,
// message-too-large X.3.4, spam-blocked and policy X.7.1, content X.6.0,
// expired X.4.7, network X.4.1, else X.0.0), its first digit that of the
// SMTP reply code when there is one, else 4 for a delay and for a failure
// after retries ("retry timeout exceeded"), else 5.
//
// # SendID
//
// Report.SendID is the send id of postroom's VERP address
// (LOCAL+<32 hex digits>@domain) in the report's To, Delivered-To,
// X-Original-To or Envelope-To, else in the returned message's
// Return-Path, else the returned message's Message-ID when postroom wrote
// it (<32 hex digits@domain>). Parse does not prove it: the receiver,
// which knows its VERP domain and its sends, does. An address that a
// report's text merely names must never be suppressed on its word alone.
//
// # Limits
//
// Parse reads at most 8 MiB of its reader and stops there; the
// human-readable and report parts come first in every shape it knows, so
// what follows (the returned message's body, attachments) is not needed.
// It keeps at most 64 KiB of each header block, 128 KiB of each leaf part
// and 512 KiB of all parts together, 64 parts and 1,000 recipients, and
// follows multiparts and returned messages 8 levels deep; the rest is
// read and dropped as it goes, line by line (lines are read in pieces of
// at most 8 KiB). So the memory a Parse takes is bounded whatever the
// message's size.
//
// # What it does not do
//
// It does not decode charsets other than UTF-8, US-ASCII and the Latin
// single-byte ones (other text is kept as valid UTF-8 with replacement
// characters), reads no provider's JSON but Amazon SES's, and does not
// verify that a report is genuine.
package bounce
