// Package mimemsg writes postroom's messages: it turns already-rendered
// strings and bytes into RFC 5322 / MIME messages. The root package
// validates the call and renders each recipient's parts; its mime.go
// turns them into what this package takes: a Layout once per call, from
// which New lays out the Skeleton, and a Varying per recipient, which
// Append writes.
//
// # What it owns
//
// The bytes of a message, and nothing else: header fields (header.go:
// addresses, RFC 2047 encoded words, folding), image and attachment parts
// (file.go: safe file names, RFC 2231 parameters, base64 lines) and the
// per-call Skeleton with its per-recipient Append (skeleton.go). It imports
// the standard library and internal/qp only: never the root package,
// templates, calls or transports, so that it cannot come to depend on them.
// Its tests read every layout back with internal/testkit/mimeread and keep a golden
// file of the shared workload's message (testdata/golden, -update to
// rewrite it).
//
// # Tree
//
// The message nests only as deep as its content needs:
//
//	text only                 text/plain
//	html only                 text/html
//	text + html               multipart/alternative
//	                          ├── text/plain
//	                          └── text/html
//	html + images             multipart/related; type="text/html"
//	                          ├── text/html
//	                          └── image/* (inline, Content-ID) ...
//	text + html + images      multipart/alternative
//	                          ├── text/plain
//	                          └── multipart/related; type="text/html"
//	                              ├── text/html
//	                              └── image/* ...
//	any of the above          multipart/mixed
//	  + attachments           ├── <the tree above>
//	                          └── attachment ...
//
// # Headers
//
// The top-level header fields come in this order: From, To, Reply-To (when
// given), Subject, Date, Message-ID, MIME-Version, the custom headers in the
// caller's order, then Content-Type (and Content-Transfer-Encoding for a
// single part). There is never a Bcc field: bcc addresses travel in the
// envelope only. Display names are written as net/mail.Address.String
// writes them (quoted when needed, RFC 2047 when not ASCII), except that a
// name holding "=?" or '\' is RFC 2047 encoded too (see appendAddress). The subject and
// custom values that are not printable ASCII become RFC 2047 UTF-8 encoded
// words (Q, or B when more than a sixth of the octets need encoding), cut
// as mime.WordEncoder cuts them but written without allocating. Lines are folded at white
// space to stay within 78 octets where the value allows it, and never go
// over 998 octets: a value with an unbreakable run too long for that is an
// error (ErrHeaderLine).
//
// # Bodies and files
//
// Text and html bodies are UTF-8, quoted-printable (internal/qp), with LF or
// CRLF line breaks written as CRLF. Images and attachments are base64 in
// lines of exactly 76 characters (the last one shorter). File names are
// reduced to a safe base name (see SafeFileName) and written in the
// Content-Type name parameter and the Content-Disposition filename
// parameter, RFC 2231 encoded when not ASCII or holding "=?". Images are
// "Content-Disposition: inline" with "Content-ID: <cid>"; attachments are
// "Content-Disposition: attachment".
//
// The output holds CRLF line endings only, no line over 998 octets, and
// 7-bit bytes only; it is not dot-stuffed (that is the SMTP client's job).
//
// # Speed
//
// New lays out once per call every byte that is the same for all
// recipients (From, Reply-To, Date, static custom headers, boundaries, part
// headers, the base64 of every file) as precomputed segments. Append
// then copies those and writes only To, Subject, Message-ID, the dynamic
// header values and the two quoted-printable bodies, into a buffer grown
// once. Boundaries are "=_" followed by a letter naming the level (m, a, r
// for mixed, alternative, related) and 24 hex characters read from the
// call's random source: quoted-printable never writes "=_" and base64 has no
// "_", so no content line can match a boundary, and the levels never share
// one even if the random source repeats itself.
//
// This layer does not sign (DKIM), does not use 8BITMIME or SMTPUTF8, and
// writes no charset but UTF-8.
package mimemsg
