// Package qp is a quoted-printable encoder (RFC 2045 §6.7) for text bodies,
// written for speed: it copies runs of bytes that need no encoding in one
// go instead of handling the input byte by byte as mime/quotedprintable's
// Writer does.
//
// The output is what postroom puts in a text/plain or text/html part with
// Content-Transfer-Encoding: quoted-printable:
//
//   - every byte outside printable ASCII, and "=", is written as =XX
//     (upper-case hex);
//   - a line break in the input, LF or CRLF, becomes a CRLF hard line
//     break; a CR not followed by LF is written as =0D;
//   - a space or tab just before a line break, or at the very end of the
//     input, is written as =20 or =09 (decoders drop trailing white space);
//   - soft line breaks ("=" CRLF) keep every encoded line at most 76
//     characters; an encoded triplet is never split.
//
// The output holds only printable ASCII, tab and CRLF, so it never contains
// a bare CR or LF. Decoding it (mime/quotedprintable.Reader) gives back the
// input with every lone LF turned into CRLF, the canonical form of text in
// MIME (RFC 2045 §6.7 note 4).
//
// The package does not decode, and it does not encode "." or "From " at the
// start of a line: dot-stuffing is the SMTP client's job.
//
// It imports nothing of the module (nor anything else); only the postroom
// package imports it.
package qp

// maxLine is the longest encoded line before a soft break's "=":
// 75 characters plus "=" is the 76 that RFC 2045 §6.7 rule 5 allows.
const maxLine = 75

// plain marks the bytes that are copied as they are: printable ASCII except
// "=", plus space and tab (which need encoding only at the end of a line).
var plain = func() (t [256]bool) {
	for c := ' '; c <= '~'; c++ {
		t[c] = c != '='
	}
	t['\t'] = true
	return t
}()

const hexDigits = "0123456789ABCDEF"

// Append appends the quoted-printable encoding of src to dst and returns the
// extended buffer. It never fails. Lines of the output are at most 76
// characters long, and the last line (the one not ended by a CRLF) at most
// 75, so a caller may end the output with a soft line break "=\r\n" without
// going over.
//
// Append keeps no state between calls and is safe for concurrent use; it
// does not retain src or dst.
func Append(dst, src []byte) []byte {
	n := len(src)
	line := 0 // characters on the current output line
	i := 0
	for i < n {
		// Copy the longest run of plain bytes that fits on the line.
		if plain[src[i]] {
			if line == maxLine {
				// The line is full and more plain text follows.
				dst = append(dst, '=', '\r', '\n')
				line = 0
			}
			room := maxLine - line
			end := min(n, i+room)
			j := i + 1
			for j < end && plain[src[j]] {
				j++
			}
			k := j
			if c := src[j-1]; (c == ' ' || c == '\t') && atLineEnd(src, j) {
				k-- // trailing white space: encoded below
			}
			dst = append(dst, src[i:k]...)
			line += k - i
			i = k
			if k == j {
				continue
			}
		}
		switch c := src[i]; {
		case c == '\n':
			dst = append(dst, '\r', '\n')
			line = 0
			i++
		case c == '\r' && i+1 < n && src[i+1] == '\n':
			dst = append(dst, '\r', '\n')
			line = 0
			i += 2
		default:
			if line+3 > maxLine {
				dst = append(dst, '=', '\r', '\n')
				line = 0
			}
			dst = append(dst, '=', hexDigits[c>>4], hexDigits[c&0x0f])
			line += 3
			i++
		}
	}
	return dst
}

// Len returns len(Append(nil, src)) without encoding, so that a caller can
// check a size limit before it writes anything. It follows Append step by
// step.
func Len(src []byte) int {
	n := len(src)
	size, line, i := 0, 0, 0
	for i < n {
		if plain[src[i]] {
			if line == maxLine {
				size += 3
				line = 0
			}
			end := min(n, i+maxLine-line)
			j := i + 1
			for j < end && plain[src[j]] {
				j++
			}
			k := j
			if c := src[j-1]; (c == ' ' || c == '\t') && atLineEnd(src, j) {
				k--
			}
			size += k - i
			line += k - i
			i = k
			if k == j {
				continue
			}
		}
		switch c := src[i]; {
		case c == '\n':
			size += 2
			line = 0
			i++
		case c == '\r' && i+1 < n && src[i+1] == '\n':
			size += 2
			line = 0
			i += 2
		default:
			if line+3 > maxLine {
				size += 3
				line = 0
			}
			size += 3
			line += 3
			i++
		}
	}
	return size
}

// atLineEnd reports whether position j of src is the end of the input or
// the start of a line break (LF or CRLF).
func atLineEnd(src []byte, j int) bool {
	if j == len(src) {
		return true
	}
	switch src[j] {
	case '\n':
		return true
	case '\r':
		return j+1 < len(src) && src[j+1] == '\n'
	}
	return false
}

// MaxLen returns an upper bound of len(Append(nil, src)) for an input of n
// bytes, for sizing a buffer once.
func MaxLen(n int) int {
	// At most 3 characters per input byte; a soft break ("=\r\n") after at
	// least 73 of them.
	return 3*n + 3*(3*n/73+1)
}
