package mimemsg

// File content given as base64 text: checked once and written re-wrapped,
// never decoded and encoded again. Canonical standard base64 (what
// base64.StdEncoding.Strict() accepts) has one spelling per content, so the
// text with its line breaks taken out is exactly what encoding the decoded
// content would give: re-wrapping it into 76-character lines writes the
// same part at the cost of a copy.

import (
	"encoding/base64"
	"strings"
)

// b64Invalid marks the octets that are not in the standard alphabet
// (padding included: '=' is checked apart, at the end only).
var b64Invalid = func() (t [256]byte) {
	for i := range t {
		t[i] = 1
	}
	for _, c := range []byte("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/") {
		t[c] = 0
	}
	return t
}()

// b64Value is the 6-bit value of a character of the standard alphabet.
var b64Value = func() (t [256]byte) {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	for i := range len(alphabet) {
		t[alphabet[i]] = byte(i)
	}
	return t
}()

// CheckBase64 returns the length of the content s encodes when s is
// standard base64 as base64.StdEncoding.Strict() decodes it: the standard
// alphabet, padded, the unused bits of the last quantum zero, CR and LF
// ignored wherever they are. Otherwise it returns a
// base64.CorruptInputError at the offset in s of the first octet found
// wrong (an incomplete last quantum is reported at the end of s). A File
// made from base64 text that passes this check (WrapBase64) is written
// without being decoded.
func CheckBase64(s string) (int, error) {
	t := s
	if strings.IndexByte(s, '\r') >= 0 || strings.IndexByte(s, '\n') >= 0 {
		t = strings.NewReplacer("\r", "", "\n", "").Replace(s)
	}
	if len(t)%4 != 0 {
		return 0, base64.CorruptInputError(len(s))
	}
	if len(t) == 0 {
		return 0, nil
	}
	pad := 0
	if t[len(t)-1] == '=' {
		pad = 1
		if t[len(t)-2] == '=' {
			pad = 2
		}
	}
	body := t[:len(t)-pad]
	// Eight octets a round: OR their marks, look closer only on a hit.
	var bad byte
	i := 0
	for ; i+8 <= len(body); i += 8 {
		bad |= b64Invalid[body[i]] | b64Invalid[body[i+1]] | b64Invalid[body[i+2]] | b64Invalid[body[i+3]] |
			b64Invalid[body[i+4]] | b64Invalid[body[i+5]] | b64Invalid[body[i+6]] | b64Invalid[body[i+7]]
	}
	for ; i < len(body); i++ {
		bad |= b64Invalid[body[i]]
	}
	if bad != 0 {
		for j := range len(body) {
			if b64Invalid[body[j]] != 0 {
				return 0, base64.CorruptInputError(offsetIn(s, j))
			}
		}
	}
	// The unused bits of a padded last quantum must be zero (Strict).
	switch last := body[len(body)-1]; pad {
	case 1:
		if b64Value[last]&0x03 != 0 {
			return 0, base64.CorruptInputError(offsetIn(s, len(body)-1))
		}
	case 2:
		if b64Value[last]&0x0f != 0 {
			return 0, base64.CorruptInputError(offsetIn(s, len(body)-1))
		}
	}
	return len(t)/4*3 - pad, nil
}

// offsetIn is the offset in s of the j-th octet that is not CR or LF.
func offsetIn(s string, j int) int {
	for i := range len(s) {
		if s[i] == '\r' || s[i] == '\n' {
			continue
		}
		if j == 0 {
			return i
		}
		j--
	}
	return len(s)
}

// WrapBase64 appends s, base64 text that CheckBase64 accepts, in lines of
// 76 characters separated by CRLF, with no CRLF after the last line: what
// encoding the content s encodes writes in a part (File.Lines).
func WrapBase64(dst []byte, s string) []byte {
	const perLine = 76
	if strings.IndexByte(s, '\r') >= 0 || strings.IndexByte(s, '\n') >= 0 {
		s = strings.NewReplacer("\r", "", "\n", "").Replace(s)
	}
	for len(s) > perLine {
		dst = append(dst, s[:perLine]...)
		dst = append(dst, '\r', '\n')
		s = s[perLine:]
	}
	return append(dst, s...)
}
