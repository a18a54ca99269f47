package bounce

import (
	"bytes"
	"io"
	"strings"
	"unicode/utf8"
)

// charsetReader converts what the standard library does not: the
// single-byte Latin charsets. Other charsets are passed through; the
// text is made valid UTF-8 where it is used (best effort: a diagnostic
// is nearly always ASCII).
func charsetReader(charset string, input io.Reader) (io.Reader, error) {
	if isLatin1(charset) {
		b, err := io.ReadAll(io.LimitReader(input, maxPartBytes))
		if err != nil {
			return nil, err
		}
		return bytes.NewReader(latin1ToUTF8(b)), nil
	}
	return input, nil
}

// isLatin1 reports whether charset is one whose bytes 0xA0-0xFF map to
// the same code points (close enough for diagnostics).
func isLatin1(charset string) bool {
	switch strings.ToLower(strings.TrimSpace(charset)) {
	case "iso-8859-1", "iso8859-1", "latin1", "latin-1", "l1", "iso_8859-1",
		"windows-1252", "cp1252", "iso-8859-15", "iso8859-15":
		return true
	}
	return false
}

// toUTF8 converts b from charset to UTF-8, best effort.
func toUTF8(charset string, b []byte) []byte {
	if isLatin1(charset) && !utf8.Valid(b) {
		return latin1ToUTF8(b)
	}
	return b
}

// latin1ToUTF8 maps each byte to the code point of the same number.
func latin1ToUTF8(b []byte) []byte {
	n := 0
	for _, c := range b {
		if c >= 0x80 {
			n++
		}
	}
	if n == 0 {
		return b
	}
	out := make([]byte, 0, len(b)+n)
	for _, c := range b {
		if c < 0x80 {
			out = append(out, c)
		} else {
			out = utf8.AppendRune(out, rune(c))
		}
	}
	return out
}
