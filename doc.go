// Package postroom is an embeddable mail engine. It implements the two
// operations of the mail-sending API, message.send and message.send_template,
// as Go calls: decode a call body into a Call, hand it to a Mailer, and get
// back exactly one Result per recipient, in input order.
//
//	m, err := postroom.New(transport, postroom.Options{Auth: postroom.StaticKeys{"acct": {"secret"}}})
//	...
//	var call postroom.Call
//	err = json.Unmarshal(body, &call) // or call, err := postroom.DecodeCall(body): strict
//	results, err := m.Send(ctx, &call)
//
// A Mailer authenticates the call, validates all of it, compiles its
// handlebars templates once, renders every recipient's message in parallel,
// builds the MIME message and hands it to a Transport: SMTP, .eml files, or
// memory (package transport). This package runs no server and keeps no
// queue: applications wrap it in their own HTTP handlers (or use package
// httpapi), send calls later through package outbox, which queues them in
// PostgreSQL with River, and when one machine is not enough, many
// application instances share an SMTP relay fleet and a template store.
//
// # Results
//
// Every recipient gets a Result whose Status says what happened to it and
// whose Reason is a stable kebab-case code, optionally followed by ": " and
// detail. SendID is 32 lowercase hex characters, set for every recipient
// whose message was made; it is also the local part of the Message-ID.
// That is the JSON form, {"email", "status", "reason", "send_id"}.
//
// Go callers need not parse Reason: Status is a typed Status, Code the
// ReasonCode alone, and Err the error behind the outcome (not in JSON):
// errors.As(r.Err, &de) reaches the transport's *DeliveryError, with the
// SMTP reply code and enhanced status code.
//
//	switch r.Code {
//	case postroom.ReasonHardBounce:
//		var de *postroom.DeliveryError
//		if errors.As(r.Err, &de) && de.Enhanced == "5.1.1" { ... }
//	}
//
// The detail of a reason is for people: what is wrong with an address, the
// next hop's reply, the params missing. It never holds postroom's or a
// transport's own error text (a file path, a network error): that goes to
// Options.Logger, at warning level for a delivery and debug level for a
// render, and to Result.Err.
//
//	status    reason                        meaning
//	sent      (empty)                       the transport accepted the message
//	sent      bcc-rejected: ...             accepted; some bcc copies were refused
//	queued    (empty)                       accepted by a transport that delivers later (Queuer)
//	invalid   invalid-email: ...            the address (or the name) is not fit for SMTP
//	invalid   duplicate: ...                an earlier recipient has the same address
//	invalid   missing-param: a, b           Options.StrictParams and placeholders without value
//	invalid   render-error: ...             the template failed for this recipient's params
//	invalid   header-injection: ...         a rendered subject, header value or name has CR or LF
//	invalid   message-too-large: ...        over Options.MaxMessageBytes
//	rejected  hard-bounce: 550 5.1.1 ...    the next hop refused for good
//	rejected  hard-bounce: suppressed ...   Options.Suppressions lists the address: it bounced;
//	rejected  soft-bounce: suppressed ...   it soft-bounced repeatedly (the entry expires);
//	rejected  spam: suppressed ...          it complained;
//	rejected  unsub: suppressed ...         it unsubscribed;
//	rejected  manual: suppressed ...        it was listed by hand. No message is made
//	deferred  soft-bounce: 451 ...          refused for now; safe to retry
//	deferred  connection-failed[: ...]      could not be handed over; safe to retry
//	deferred  transport-unusable[: ...]     the transport cannot deliver as configured; fix it, then retry
//	deferred  timeout                       a deadline passed first; safe to retry
//	deferred  canceled                      the call's ctx was canceled first; safe to retry
//	deferred  not-sent                      RunOptions.BeforeSend kept it back; safe to retry
//	unknown   connection-lost-after-data    may have been delivered: do not blindly retry
//	unknown   interrupted                   idempotency.Run, outbox: handed over before a crash, no result
//
// A suppressed recipient's reason says since when and why, such as
// "hard-bounce: suppressed since 2026-11-20: 550 5.1.1 user unknown"; its
// Err is a *SuppressedError holding the entry.
//
// # Suppressions and events
//
// Options.Suppressions is consulted once per run (Send, SendTemplate,
// Mailer.Run, each Prepared.Run or RunSome) and once per Preview or
// Validate, in one batched lookup of every recipient that passed
// validation and every bcc address, before anything is rendered:
// a listed recipient is rejected as above and never reaches the
// Transport; a listed bcc address is dropped from every envelope (the
// bcc is no recipient and has no Result) and the drop logged at info
// level. Addresses are compared as the whole address lower-cased. A
// lookup that fails refuses the call with an error wrapping
// ErrSuppressions: nothing is sent. Package suppression keeps such lists
// (in memory, in PostgreSQL) and the policy that feeds them.
//
// List mail and transactional mail are kept apart. A call whose
// message.headers carry List-Id (RFC 2919; ListID writes it) sends mail of
// that list; every other call is transactional (a receipt, a password
// reset). Each entry has a Scope: a list message is stopped by the
// entries of its list, of all lists and of all mail; a transactional
// message only by those of all mail (a hard bounce, a complaint about a
// transactional message). Options.Unsubscribe writes one-click headers
// into list mail only, unless Options.UnsubscribeAllMail.
//
// Options.OnEvent receives an Event, with Mandrill's event names, for each
// recipient's final Result of a Run that is one: send (sent or queued),
// deferral (deferred), reject (suppressed), and for a refusal at SMTP
// time hard_bounce when the reply's enhanced status code says the address
// is dead (X.1.1, X.1.2, X.1.3, X.1.6, X.1.10, X.2.1) and soft_bounce
// otherwise. Invalid and unknown Results are no events.
//
// # Errors
//
// A call-level error means nothing was sent: ErrUnauthorized,
// ErrNoRecipients, ErrTooManyRecipients, or one or more *ValidationError
// (joined with errors.Join), each naming the offending field as a path such
// as "message.images[1].cid". Check them with errors.Is and errors.As;
// ValidationErrors lists them all, through any wrapping, and returns nil
// when err holds anything else. Everything in a call that the caller
// controls (a header name or value, a content type, an address, a name)
// is refused with a *ValidationError, never another error: an HTTP
// handler answers 400 for the one and 500 for the other.
// Two errors come back together with the full results: ctx's error when
// the call was canceled mid-way, and an error wrapping ErrTransportUnusable
// when the transport cannot deliver anything (a refused SMTP login): the
// Mailer then stops handing over messages instead of turning every
// recipient into the same failure.
//
// Transports report failures with *DeliveryError (permanent, uncertain or
// temporary) and *PartialError (only bcc copies refused).
//
// New, and the constructor of every package of the module, refuses an
// option it cannot work with by an *OptionsError naming the field (package
// option holds the rules: a zero field means its documented default, a
// negative number is refused unless the field gives it a meaning, a nil
// Logger discards).
//
// # Templates
//
// The subject, html, text and header values are handlebars templates,
// parsed with github.com/aymerick/raymond's parser and compiled once per
// call into a program that renders each recipient without reflection on
// JSON data. A recipient's params override global_params key by key; a
// param value is data, never evaluated.
//
//   - {{x}} is HTML-escaped in the html body only; in the subject, the text
//     body and header values it is inserted as is. {{{x}}} is raw everywhere.
//   - A backslash makes a mustache literal: \{{x}} renders {{x}}, for a
//     template that must show braces; \\{{x}} renders a backslash and x.
//   - Params given as Go values (in a Call built in Go rather than decoded
//     from JSON) are read as their JSON encoding would be: a struct field
//     by its json tag name (omitempty and other options do not matter),
//     an untagged exported field by its Go name exactly, json:"-" and
//     unexported fields never; embedded structs' fields are promoted as
//     encoding/json promotes them. {{order.customer_name}} finds
//     CustomerName string `json:"customer_name"`.
//   - Missing params render empty, or make the recipient invalid with
//     Options.StrictParams.
//   - They mean what they mean in handlebars.js 4.7, the reference (see
//     internal/program and docs/TEMPLATES.md), except that integers print
//     exactly as given. {{#each}} over an object decoded from JSON visits
//     its keys in handlebars.js's order (integer-like keys first, in
//     numeric order, then the others as written), the root context too
//     (params over global_params, as Object.assign({}, global_params,
//     params)); over a Go map built in Go, which has no order, the others
//     sorted. See Params.
//   - Helpers: if, unless, each, with, lookup, equal, log, and upper, lower,
//     title, default, eq, ne, gt, lt, and, or, not, length, url, striptags,
//     date. They are registered per template, never globally. {{log}} goes
//     to Options.Logger at debug level, never to the host's logger.
//   - Partials ({{> footer}}, partial blocks, inline partials) come from
//     Options.Templates in the call's account, fetched and compiled once
//     per call; Options.Helpers adds the Mailer's own typed helpers (see
//     Helper and the README's "Templates").
//   - Unknown helpers, missing partials and helpers called with the wrong
//     number of arguments are refused when the call is validated, with
//     the part and position of the problem. The name of one of
//     postroom's own helpers alone ({{title}}) is a param; the name of one
//     of Options.Helpers is a call of it, even with no arguments.
//   - Mailer.CheckTemplate compiles a template to be stored, as a call
//     would, and returns a *TemplateError with its line and column;
//     Mailer.RenderTemplate renders one for sample params. Package
//     templatestore keeps drafts and published versions (calls use the
//     published one).
//   - The rendered html is compared byte for byte with handlebars.js's by
//     a differential test and a fuzz test.
//   - All the parts of a recipient's message render within the message
//     size limit (Options.MaxMessageBytes less the call's attachments,
//     images and fixed headers): a render stops as soon as the parts
//     together would exceed it, and the recipient is invalid with reason
//     message-too-large. A render also stops when the call's ctx is done;
//     the recipient is then deferred.
//
// # Messages
//
// Each message is CRLF-only, 7-bit, with no line over 998 octets: bodies are
// quoted-printable UTF-8, files base64. The MIME tree is only as deep as the
// message needs:
//
//	multipart/mixed                      only with attachments
//	├── multipart/alternative            only with both text and html
//	│   ├── text/plain
//	│   └── multipart/related            only with inline images
//	│       ├── text/html
//	│       └── image/* (Content-ID)     inline images
//	└── application/pdf ...              attachments
//
// Bcc addresses are in the envelope only, never in a header. Everything that
// is the same for every recipient (header lines, part headers, boundaries,
// the base64 of every file) is laid out once per call.
//
// # Concurrency
//
// A Mailer is safe for concurrent use. Its configuration never changes
// after New; what it keeps across calls (pooled buffers, caches of
// compiled templates and of checked and encoded files, each bounded by
// its Options) never shows in a call's results. Each call renders and
// hands over up to Options.Concurrency recipients at once; each worker
// writes only its own recipients' results, and a recipient's failure never
// cancels the others. All of a call's goroutines have ended when Send
// returns. A call with one worker (one recipient, or Concurrency 1) is sent
// from the caller's goroutine. Memory in flight is about Concurrency × message
// size, flat in the number of recipients, and at most about Concurrency ×
// MaxMessageBytes: a recipient in flight weighs twice what its buffers
// hold (render buffers, generated text, message with its signatures; the
// garbage collector's headroom is the other half), so fewer large messages
// are in flight at a time (the call's first recipient is in flight alone
// and gives the size of the rest), and a worker lets go of buffers over 1 MiB after its
// recipient.
//
// # Prepared calls
//
// A run is one sending of a checked call to its recipients, all of them or
// some: Send, SendTemplate and Mailer.Run check a call and run it at once
// (Preview checks it and renders it, sending nothing). Mailer.Prepare
// splits checking from running, as database/sql's Prepare gives a Stmt:
// it authenticates, validates, compiles and lays out the call once and
// returns a *Prepared, whose Run and RunSome send to all or some of its
// recipients (results and hooks indexed as in the call), whose Preview
// shows them, and whose Checks report what Validate reports. Each run
// draws its own send-id keys and boundaries (Options.Rand), Date
// (Options.Now) and DKIM signing. A Prepared is immutable and safe for
// concurrent use, and keeps the *Call: do not modify the call while the
// Prepared is in use. Packages idempotency and outbox run the recipients
// they have left through it; the outbox prepares a call once per attempt
// of a job, and runs it once per batch.
//
// # Limits
//
// Every limit is an Options field; zero means the default, and New
// refuses a negative value except where noted:
//
//	MaxRecipients     25,000   recipients per call (ErrTooManyRecipients)
//	MaxMessageBytes   25 MiB   one complete message (message-too-large)
//	MaxBCC            100      addresses in message.bcc
//	MaxHeaders        100      fields in message.headers
//	MaxTemplateBytes  512 KiB  one template source
//	MaxTemplateDepth  32       nesting of template blocks
//	MaxRenderBytes    8 MiB    one part rendered for one recipient (render-error)
//	MaxRenderSteps    1e6      nodes and iterations of one render (render-error)
//	MaxPartialDepth   8        chain of partials a template calls
//	Concurrency       4×GOMAXPROCS, at least 8
//	TemplateCacheEntries  1024    compiled templates kept across calls (negative: no cache)
//	TemplateCacheBytes    32 MiB  their estimated memory (negative: no cache)
//	FileCacheBytes        32 MiB  images and attachments kept checked and encoded (negative: no cache)
//
// Addresses follow RFC 5321's lengths (local part 64, domain 255, path 254
// octets); an account_id is at most 255 bytes of UTF-8 without a control
// character (as package suppression and httpapi take it); display names
// are at most 512 bytes, custom header names 76 octets (the name, colon
// and space fit a 78-octet line), content types 256 octets. A custom
// header value that is the same for every recipient must fold within
// 998-octet lines (a ValidationError otherwise); one that varies and does
// not is a render-error for that recipient.
//
// Fields that could mislead a reader are refused or neutralised: an
// address whose local part holds "=?" (an encoded-word look-alike) is
// refused in every address field, as are control characters other than
// tab in names; a display name holding "=?" is written as RFC 2047 encoded
// words, so that decoding gives back the literal text; a file name is
// decoded as RFC 2047 first, as some readers do, then reduced to a base
// name without control or format characters.
//
// # What postroom does not do
//
// It does not queue or retry later (package outbox does, over a Mailer),
// track opens or clicks, read bounces (VERP only makes them matchable: see
// VERP.SendID), or accept UTF-8 local parts (RFC 6531), quoted local parts
// or domain literals.
//
// # Deliverability
//
// Options.DKIM signs every message (DKIMSigner); a call with html and no
// text gets a text part generated from the html unless Options.HTMLOnly;
// a List-Unsubscribe-Post header (RFC 8058 one-click) needs a
// List-Unsubscribe header holding an https URI, and Options.Unsubscribe
// writes both, with each recipient's own URL, into the messages of list
// calls that write none; Options.VERP puts each
// recipient's send_id in its envelope sender.
//
// # Imports
//
// From the module this package imports only packages that import nothing
// of it: delivery (the delivery contract: Envelope, Transport and the
// errors a Transport returns, whose names this package declares again as
// aliases), option (the options rules and OptionsError), internal/program
// (the template engine), internal/mimemsg (the MIME writer, with its
// quoted-printable encoder internal/qp), internal/htmltext (the generated
// text part), internal/dkim (the DKIM signer), internal/calljson (the
// generic half of the call JSON codec), internal/replytext (an SMTP
// reply's text), internal/sendid (the check of a send id read back) and
// internal/accountid (the check of an account id); beyond the standard
// library, raymond's parser (through internal/program), x/net's html
// tokenizer and idna, and x/sync (DKIM signs with the standard library's
// crypto). It never imports transport, templatestore, httpapi or outbox
// (they import it), nor a test kit (internal/testkit).
package postroom
