// Package accountid holds the one check of an account id (a call's
// account_id, the account of a suppression entry) that every package
// keeping or passing one makes before a store sees it: the root's
// validation of a call, httpapi's endpoints and package suppression. An
// account id goes into PostgreSQL text columns (the outbox's calls, the
// events, the suppression list, the stored templates), which hold no NUL
// and only valid UTF-8, and into log lines.
package accountid

import (
	"unicode"
	"unicode/utf8"
)

// MaxBytes is the longest account id taken, in bytes.
const MaxBytes = 255

// The problems Check reports.
const (
	tooLong = "longer than 255 bytes" // MaxBytes
	notUTF8 = "not valid UTF-8"
	control = "holds a control character"
)

// Check returns what is wrong with id, in lower case, fit for a
// ValidationError's reason: longer than MaxBytes bytes, not valid UTF-8,
// or holding a control character (Unicode's Cc: a NUL, a line break, a
// tab, DEL, the C1 controls); or "" when id is fit. The empty id is fit:
// whether an account is required is the caller's rule.
func Check(id string) string {
	if len(id) > MaxBytes {
		return tooLong
	}
	for i := 0; i < len(id); {
		if c := id[i]; c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f {
				return control
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(id[i:])
		if r == utf8.RuneError && n == 1 {
			return notUTF8
		}
		if unicode.IsControl(r) {
			return control
		}
		i += n
	}
	return ""
}
