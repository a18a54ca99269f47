package mimemsg

// Header field encoding for the MIME layer: addresses, unstructured text
// (RFC 2047 encoded words when not ASCII) and folding (RFC 5322 §2.2.3).

import (
	"encoding/base64"
	"net/mail"
	"strings"
	"unicode/utf8"
)

// FieldError is the error of a header field that cannot be written.
type FieldError struct {
	// Field is the field's name, such as "Subject" or a custom header's.
	Field string
	// Err is why, such as ErrHeaderLine.
	Err error
}

func (e *FieldError) Error() string { return "postroom: " + e.Field + " field: " + e.Err.Error() }

// Unwrap returns e.Err.
func (e *FieldError) Unwrap() error { return e.Err }

// addressString is an address with a display name as appendAddress writes
// it, unfolded: fit for appendFolded.
func addressString(name, addr string) string {
	if !simpleAddr(addr) {
		return (&mail.Address{Name: name, Address: addr}).String()
	}
	b, _ := appendAddress(nil, 0, name, addr) // cannot fail from the start of a line
	return strings.ReplaceAll(string(b[1:]), "\r\n", "")
}

// phraseSpecials are the printable ASCII characters that the text of an
// encoded word in a phrase must not hold (RFC 2047 §5 (3): only letters,
// digits and "!*+-/=_" may stay as they are) and that Q encoding leaves
// as they are: a name holding one is B encoded.
const phraseSpecials = "\"#$%&'(),.:;<>@[\\]^`{|}~"

// appendAddress appends " " and the address, folded: as
// net/mail.Address.String writes it, except that a name holding "=?" is
// encoded too (net/mail and others decode encoded words even inside a
// quoted string, so "=?utf-8?q?evil?= <evil@attacker.example>" would show
// as another address), and so is a name ending in '\' (net/mail leaves it
// in a Q encoded word, where RFC 2047 §5 (3) forbids it). For a dot-atom
// address it writes straight into dst, allocating nothing unless a
// printable ASCII name makes the line longer than 78 octets.
func appendAddress(dst []byte, line int, name, addr string) ([]byte, error) {
	if !simpleAddr(addr) {
		return appendFolded(dst, line, (&mail.Address{Name: name, Address: addr}).String())
	}
	if !simpleName(name) || strings.Contains(name, "=?") {
		enc := byte('q')
		if strings.ContainsAny(name, phraseSpecials) {
			enc = 'b'
		}
		dst, line = appendWords(dst, line, name, enc)
		if line+3+len(addr) > foldAt {
			dst = append(dst, '\r', '\n')
			line = 0
		}
		if line+3+len(addr) > maxLine {
			return dst, ErrHeaderLine
		}
		dst = append(dst, " <"...)
		dst = append(dst, addr...)
		return append(dst, '>'), nil
	}
	mark := len(dst)
	dst = append(dst, ' ')
	if name != "" {
		dst = append(dst, '"')
		for i := 0; i < len(name); i++ {
			if c := name[i]; c == '"' || c == '\\' {
				dst = append(dst, '\\')
			}
			dst = append(dst, name[i])
		}
		dst = append(dst, '"', ' ')
	}
	dst = append(dst, '<')
	dst = append(dst, addr...)
	dst = append(dst, '>')
	if line+len(dst)-mark <= foldAt {
		return dst, nil
	}
	long := string(dst[mark+1:])
	return appendFolded(dst[:mark], line, long)
}

// simpleName reports whether net/mail writes name as a plain quoted
// string: printable ASCII, space and tab.
func simpleName(name string) bool {
	for i := 0; i < len(name); i++ {
		if c := name[i]; (c < ' ' || c > '~') && c != '\t' {
			return false
		}
	}
	return true
}

// simpleAddr reports whether addr is local@domain with dot-atom parts,
// which net/mail writes unquoted.
func simpleAddr(addr string) bool {
	at := strings.LastIndexByte(addr, '@')
	return at > 0 && IsDotAtom(addr[:at]) && IsDotAtom(addr[at+1:])
}

// AppendText appends " " and an unstructured header value (RFC 5322
// §3.2.5), folded: as is when it is printable ASCII (with space and tab),
// else as RFC 2047 UTF-8 encoded words. A value holding "=?" is encoded
// too, so that no reader takes text that looks like an encoded word for
// one (mime.WordEncoder leaves such text as is). Q encoding is used unless more than
// a sixth of the octets need encoding (B then).
func AppendText(dst []byte, line int, s string) ([]byte, error) {
	special := 0
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < ' ' || c > '~') && c != '\t' {
			special++
		}
	}
	if special == 0 && !strings.Contains(s, "=?") {
		return appendFolded(dst, line, s)
	}
	enc := byte('q')
	if special*6 > len(s) {
		enc = 'b'
	}
	dst, _ = appendWords(dst, line, s, enc)
	return dst, nil
}

// Encoded-word limits, as mime.WordEncoder has them: a word is at most 75
// octets (RFC 2047 §2), leaving 63 for the encoded text, which holds at
// most 45 octets in B encoding.
const (
	maxWordText = 75 - len("=?utf-8?q?") - len("?=")
	maxWordB64  = maxWordText / 4 * 3
)

// appendWords appends s as RFC 2047 UTF-8 encoded words, each preceded by
// a space or a fold (CRLF and space) when it would take the line past 78
// octets, and returns the extended buffer and the current line's length.
// enc is 'q' or 'b'. The words are exactly those of mime.QEncoding or
// mime.BEncoding's Encode("utf-8", s), without allocating: a character is
// never split across words.
func appendWords(dst []byte, line int, s string, enc byte) ([]byte, int) {
	single := enc == 'b' && base64.StdEncoding.EncodedLen(len(s)) <= maxWordText
	for i := 0; i < len(s); {
		j, n := i, 0 // the word's input ends at j; n octets of encoded text
		switch {
		case single:
			j, n = len(s), base64.StdEncoding.EncodedLen(len(s))
		case enc == 'b':
			for j < len(s) {
				_, size := utf8.DecodeRuneInString(s[j:])
				if j-i+size > maxWordB64 {
					break
				}
				j += size
			}
			n = base64.StdEncoding.EncodedLen(j - i)
		default:
			for j < len(s) {
				size, w := 1, 1
				if c := s[j]; c < ' ' || c > '~' || c == '=' || c == '?' || c == '_' {
					_, size = utf8.DecodeRuneInString(s[j:])
					w = 3 * size
				}
				if n+w > maxWordText {
					break
				}
				j, n = j+size, n+w
			}
		}
		if line+1+12+n > foldAt {
			dst = append(dst, '\r', '\n')
			line = 0
		}
		dst = append(dst, " =?utf-8?"...)
		dst = append(dst, enc, '?')
		if enc == 'b' {
			var raw [maxWordText]byte // holds up to 47 octets of input
			dst = base64.StdEncoding.AppendEncode(dst, raw[:copy(raw[:], s[i:j])])
		} else {
			for k := i; k < j; k++ {
				switch c := s[k]; {
				case c == ' ':
					dst = append(dst, '_')
				case c > ' ' && c <= '~' && c != '=' && c != '?' && c != '_':
					dst = append(dst, c)
				default:
					dst = append(dst, '=', upperHex[c>>4], upperHex[c&0x0f])
				}
			}
		}
		dst = append(dst, '?', '=')
		line += 1 + 12 + n
		i = j
	}
	return dst, line
}

const upperHex = "0123456789ABCDEF"

// appendFolded appends " " and value to dst, where the current line
// already holds line octets, folding (CRLF before white space) so that
// lines stay within 78 octets where the value allows it. Each folded line
// starts with white space and holds something else too, so unfolding
// (RFC 5322 §2.2.3: removing the CRLFs) gives back " " and value. It fails
// with ErrHeaderLine when a line would go over 998 octets. An empty value
// appends nothing.
func appendFolded(dst []byte, line int, value string) ([]byte, error) {
	if value == "" {
		return dst, nil
	}
	// Chunks are a white space run followed by a run of other octets; the
	// first chunk's white space is the " " after the colon, and trailing
	// white space stays with the last chunk. A fold goes before a chunk
	// that holds something besides white space.
	i := 0
	for i < len(value) {
		j := i
		for j < len(value) && isWSP(value[j]) {
			j++
		}
		text := j
		for j < len(value) && !isWSP(value[j]) {
			j++
		}
		text = j - text
		k := j
		for k < len(value) && isWSP(value[k]) {
			k++
		}
		if k == len(value) {
			j = k
		}
		n := j - i
		if i == 0 {
			n++ // the space after the colon
		}
		if line+n > foldAt && line > 0 && text > 0 {
			dst = append(dst, '\r', '\n')
			line = 0
		}
		if line+n > maxLine {
			return dst, ErrHeaderLine
		}
		if i == 0 {
			dst = append(dst, ' ')
		}
		dst = append(dst, value[i:j]...)
		line += n
		i = j
	}
	return dst, nil
}

func isWSP(c byte) bool { return c == ' ' || c == '\t' }

// IsAtext reports whether c is RFC 5322 atext.
func IsAtext(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-/=?^_`{|}~", c) >= 0
}

// IsDotAtom reports whether s is an RFC 5322 dot-atom-text.
func IsDotAtom(s string) bool {
	if s == "" || s[0] == '.' || s[len(s)-1] == '.' || strings.Contains(s, "..") {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] != '.' && !IsAtext(s[i]) {
			return false
		}
	}
	return true
}
