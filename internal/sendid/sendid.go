// Package sendid reads send ids back: the 32 lower-case hexadecimal
// digits that postroom gives each message (its Result's SendID), as
// they come back in any letter case from a VERP address, a report's
// headers or an application. It is the one such check of the packages
// that prove sends (events), act on reports (inbound), read reports
// (bounce) and VERP addresses (the root).
package sendid

// Len is the length of a send id: 128 bits in hexadecimal.
const Len = 32

// Normalize returns id in lower case when it is a send id (Len
// hexadecimal digits, in either case), else "".
func Normalize(id string) string {
	if len(id) != Len {
		return ""
	}
	var b [Len]byte
	lower := true
	for i := 0; i < Len; i++ {
		c := id[i]
		switch {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'f':
		case c >= 'A' && c <= 'F':
			c += 'a' - 'A'
			lower = false
		default:
			return ""
		}
		b[i] = c
	}
	if lower {
		return id
	}
	return string(b[:])
}
