package htmltext

// Decoding text and attribute values as x/net/html's Tokenizer does in
// Text and TagAttr: CR LF and CR to LF, NUL to U+FFFD (in attribute
// values and raw text), and character references.

import (
	"bytes"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
)

// decodeKind says how a span of the html is decoded.
type decodeKind uint8

const (
	decodeText      decodeKind = iota // text: character references
	decodeRCDATA                      // textarea and title: character references, NUL
	decodeRaw                         // script, style and the other raw text elements: NUL only
	decodeAttribute                   // attribute values: character references (attribute rules), NUL
)

// decode returns t decoded as kind, t itself when nothing changes, or
// else in cv's buffer buf.
func (cv *Converter) decode(buf *[]byte, t []byte, kind decodeKind) []byte {
	refs := kind != decodeRaw
	nul := kind != decodeText
	i := 0
	for ; i < len(t); i++ {
		if b := t[i]; b == '\r' || b == '&' && refs || b == 0 && nul {
			break
		}
	}
	if i == len(t) {
		return t
	}
	out := append((*buf)[:0], t[:i]...)
	for i < len(t) {
		switch b := t[i]; {
		case b == '\r':
			out = append(out, '\n')
			i++
			if i < len(t) && t[i] == '\n' {
				i++
			}
		case b == 0 && nul:
			out = append(out, "\uFFFD"...)
			i++
		case b == '&' && refs:
			var n int
			out, n = cv.reference(out, t[i:], kind == decodeAttribute)
			i += n
		default:
			out = append(out, b)
			i++
		}
	}
	*buf = out
	return out
}

// windows1252 maps the numeric references 0x80 to 0x9F, which old
// documents meant as Windows-1252, to what they meant (the WHATWG
// "consume a character reference" table, as x/net/html has it).
var windows1252 = [32]rune{
	'\u20AC', '\u0081', '\u201A', '\u0192', '\u201E', '\u2026', '\u2020', '\u2021',
	'\u02C6', '\u2030', '\u0160', '\u2039', '\u0152', '\u008D', '\u017D', '\u008F',
	'\u0090', '\u2018', '\u2019', '\u201C', '\u201D', '\u2022', '\u2013', '\u2014',
	'\u02DC', '\u2122', '\u0161', '\u203A', '\u0153', '\u009D', '\u017E', '\u0178',
}

// reference appends what the character reference at the start of s (at
// the '&') stands for, as x/net/html reads it, and returns how many bytes
// of s it took. What is no reference stands for its '&'.
func (cv *Converter) reference(out, s []byte, attribute bool) ([]byte, int) {
	if len(s) <= 1 {
		return append(out, '&'), 1
	}
	if s[1] == '#' {
		if len(s) <= 2 {
			return append(out, '&'), 1
		}
		i, hex := 2, false
		if s[2] == 'x' || s[2] == 'X' {
			i, hex = 3, true
		}
		i0, x := i, rune(0)
		for ; i < len(s); i++ {
			c := s[i]
			var d, mult rune
			switch {
			case hex && '0' <= c && c <= '9':
				d, mult = rune(c)-'0', 16
			case hex && 'a' <= c && c <= 'f':
				d, mult = rune(c)-'a'+10, 16
			case hex && 'A' <= c && c <= 'F':
				d, mult = rune(c)-'A'+10, 16
			case !hex && '0' <= c && c <= '9':
				d, mult = rune(c)-'0', 10
			}
			if mult == 0 {
				break
			}
			if x <= unicode.MaxRune {
				x = mult*x + d
			}
		}
		if i == i0 {
			return append(out, '&'), 1
		}
		if i < len(s) && s[i] == ';' {
			i++
		}
		switch {
		case 0x80 <= x && x <= 0x9F:
			x = windows1252[x-0x80]
		case x == 0 || 0xD800 <= x && x <= 0xDFFF || x > unicode.MaxRune:
			x = utf8.RuneError
		}
		return utf8.AppendRune(out, x), i
	}
	i := 1
	for i < len(s) {
		c := s[i]
		i++
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' {
			continue
		}
		if c != ';' {
			i--
		}
		break
	}
	name := s[1:i]
	switch {
	case len(name) == 0:
		return append(out, '&'), 1
	case attribute && name[len(name)-1] != ';' && i < len(s) && s[i] == '=':
		return append(out, '&'), 1
	}
	text := cv.named(name)
	if len(text) == len(name)+1 && text[0] == '&' && text[1:] == string(name) {
		return append(out, '&'), 1
	}
	// In text, a name that is no reference may start with one written
	// without its semicolon ("&notit;" is "¬it;"); an attribute value
	// takes only whole names. The text of a whole name never ends with
	// the name's last byte (a letter, digit or ';'), but for "&semi;";
	// the text of a name's start always does.
	if attribute && text[len(text)-1] == name[len(name)-1] && string(name) != "semi;" {
		return append(out, '&'), 1
	}
	return append(out, text...), i
}

// maxEntities bounds the references a Converter remembers, and
// maxEntityName the length of a name it remembers (the longest reference,
// "&CounterClockwiseContourIntegral;", has 32).
const maxEntities, maxEntityName = 256, 32

// named returns the text of "&" followed by name (letters and digits,
// perhaps a final ';') as x/net/html reads it in text: the character of
// the reference, that of the reference its start is followed by the rest,
// or itself. x/net/html's table (WHATWG's list of named references) says
// which names are references; cv remembers the answers.
func (cv *Converter) named(name []byte) string {
	if s, ok := cv.entities[string(name)]; ok {
		return s
	}
	s := html.UnescapeString("&" + string(name))
	if len(name) <= maxEntityName && len(cv.entities) < maxEntities {
		if cv.entities == nil {
			cv.entities = make(map[string]string)
		}
		cv.entities[string(name)] = s
	}
	return s
}

// displayNone reports whether a style attribute's value, decoded, hides
// its element: it says "display:none" or "visibility:hidden", in any
// case and with any spaces (as strings.ToLower and the removal of each
// ' ' would find them).
func (cv *Converter) displayNone(raw []byte) bool {
	if bytes.IndexByte(raw, '&') < 0 && !mayHideStyle(raw) {
		return false
	}
	v := cv.decode(&cv.attrBuf, raw, decodeAttribute)
	low := cv.lowBuf[:0]
	for len(v) > 0 {
		r, n := rune(v[0]), 1
		if r >= utf8.RuneSelf {
			r, n = utf8.DecodeRune(v)
		}
		v = v[n:]
		switch r = unicode.ToLower(r); {
		case r == ' ':
		case r < utf8.RuneSelf:
			low = append(low, byte(r))
		default:
			low = append(low, 0x80) // no ASCII letter
		}
	}
	cv.lowBuf = low
	return bytes.Contains(low, []byte("display:none")) || bytes.Contains(low, []byte("visibility:hidden"))
}

// mayHideStyle reports whether a style attribute's value with no
// character reference may hide its element: a ':' has a 'y' before it
// and an 'n' or 'h' after it, but for spaces, in any case. No other
// bytes lower-case to these ('İ' lower-cases to 'i', the Kelvin sign to
// 'k').
func mayHideStyle(v []byte) bool {
	for i := 0; ; {
		j := bytes.IndexByte(v[i:], ':')
		if j < 0 {
			return false
		}
		j += i
		k := j - 1
		for k >= 0 && v[k] == ' ' {
			k--
		}
		l := j + 1
		for l < len(v) && v[l] == ' ' {
			l++
		}
		if k >= 0 && v[k]|0x20 == 'y' && l < len(v) && (v[l]|0x20 == 'n' || v[l]|0x20 == 'h') {
			return true
		}
		i = j + 1
	}
}

// mayHide reports whether a raw tag may hide its element: it holds
// "none" or "hidden" in any case.
func mayHide(raw []byte) bool {
	for i := 0; i+4 <= len(raw); i++ {
		switch raw[i] | 0x20 {
		case 'n':
			if bytes.EqualFold(raw[i:i+4], []byte("none")) {
				return true
			}
		case 'h':
			if i+6 <= len(raw) && bytes.EqualFold(raw[i:i+6], []byte("hidden")) {
				return true
			}
		}
	}
	return false
}
