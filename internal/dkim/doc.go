// Package dkim signs postroom's messages (DKIM, RFC 6376): relaxed/relaxed
// canonicalization with sha256, rsa-sha256 (PKCS #1 v1.5) and
// ed25519-sha256 (RFC 8463), on the standard library's crypto. The root
// package checks its Options.DKIM, makes a Call once per call (NewCall)
// and signs each message in place (Reserve, SignInPlace); this package
// imports the standard library and internal/mimemsg only, never the root.
//
// What is the same for every message of a call is made once per call: the
// h= list, each signer's DKIM-Signature field but for its bh= and b=
// values (and its canonical form), and which lines at the end of every
// message (the skeleton's static tail: images and attachments in base64
// lines) are canonical as they are (tail.go). A message then costs one
// SHA-256 pass over its body, in which only the per-recipient parts are
// canonicalized (canon.go), its signed header fields rewritten into a
// reused buffer, and one signature per key (sign.go).
//
// go-msgauth and dkimpy verify the root's output in its tests; the root's
// TestDKIMMatchesGoMsgauth and this package's FuzzDKIMCanon hold the
// signer to go-msgauth's signatures octet for octet, FuzzDKIMStaticTail
// holds the static tail's shortcut to the full canonicalization, and
// FuzzRelaxedBody and FuzzRelaxedField hold the canonicalization to RFC
// 6376 written out line by line.
//
// It does not verify signatures, and signs only what the root asks: the
// keys are checked by the root's New.
package dkim
