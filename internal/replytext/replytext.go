// Package replytext normalizes the text of a next hop's reply, the one
// rule for it in the module: the SMTP transport applies it to the reply
// texts it puts in a delivery.DeliveryError, package delivery to the
// reply in a DeliveryError's text, and the root package to every
// DeliveryError's reply when it repeats it in a Result's reason,
// whichever Transport made it.
package replytext

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Max is the most octets of a reply Line keeps.
const Max = 512

// Line returns s on one line of valid UTF-8: bytes that are not UTF-8
// dropped, every run of white space and control characters (CR, LF, TAB,
// NUL...) made one space, none at either end, and cut, between runes, to
// at most Max octets. It allocates nothing when s already is such a line
// of printable ASCII.
func Line(s string) string {
	if !clean(s) {
		s = strings.Join(strings.FieldsFunc(strings.ToValidUTF8(s, ""), isSpaceOrControl), " ")
	}
	if len(s) > Max {
		i := Max
		for i > 0 && !utf8.RuneStart(s[i]) {
			i--
		}
		s = strings.TrimRight(s[:i], " ")
	}
	return s
}

// Reply is a next hop's reply as a DeliveryError holds it, "code enhanced
// text" (each part left out when zero or empty), made one line by Line;
// "" when all three are.
func Reply(code int, enhanced, text string) string {
	parts := make([]string, 0, 3)
	if code != 0 {
		parts = append(parts, strconv.Itoa(code))
	}
	if enhanced != "" {
		parts = append(parts, enhanced)
	}
	if text != "" {
		parts = append(parts, text)
	}
	return Line(strings.Join(parts, " "))
}

// isSpaceOrControl reports whether r separates the words of a reply.
func isSpaceOrControl(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }

// clean reports whether s is already one line as Line makes it: printable
// ASCII words separated by single spaces. Anything else (non-ASCII
// included) takes the general path.
func clean(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == ' ':
			if i == 0 || i == len(s)-1 || s[i-1] == ' ' {
				return false
			}
		case c < ' ' || c >= 0x7f:
			return false
		}
	}
	return true
}
