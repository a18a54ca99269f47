package htmltext

// The scanner: where x/net/html's Tokenizer (golang.org/x/net v0.62.0,
// token.go) would find each token, found in one pass over the html with
// no copy. Each function names the Tokenizer method it follows; the
// differential tests and FuzzAppend compare the two.

import (
	"bytes"

	"golang.org/x/net/html/atom"
)

// attr is an attribute of a start tag: the spans of its key and value in
// the html.
type attr struct {
	key0, key1, val0, val1 int
}

func isLetter(c byte) bool { return 'a' <= c|0x20 && c|0x20 <= 'z' }

// startsMarkup reports whether a '<' followed by c starts a tag, an end
// tag, a comment or a declaration.
func startsMarkup(c byte) bool {
	return isLetter(c) || c == '/' || c == '!' || c == '?'
}

// markup returns the index of the next '<' from i that starts a tag, an
// end tag, a comment or a declaration (one followed by a letter, '/', '!'
// or '?'), or len(src) (Tokenizer.Next).
func markup(src []byte, i int) int {
	for {
		j := bytes.IndexByte(src[i:], '<')
		if j < 0 {
			return len(src)
		}
		k := i + j
		if k+1 >= len(src) {
			return len(src)
		}
		if startsMarkup(src[k+1]) {
			return k
		}
		i = k + 1
	}
}

// closeAngle returns the index after the first '>' from i, or -1
// (Tokenizer.readUntilCloseAngle).
func closeAngle(src []byte, i int) int {
	if i > len(src) {
		return -1
	}
	j := bytes.IndexByte(src[i:], '>')
	if j < 0 {
		return -1
	}
	return i + j + 1
}

// commentEnd returns the index after the comment whose "<!--" ends at i,
// or -1 when the html ends first (Tokenizer.readComment).
func commentEnd(src []byte, i int) int {
	dashes, beginning := 0, true
	for i < len(src) {
		c := src[i]
		i++
		switch c {
		case '-':
			dashes++
			continue
		case '>':
			if dashes >= 2 || beginning {
				return i
			}
		case '!':
			if dashes >= 2 {
				if i >= len(src) {
					return -1
				}
				c = src[i]
				i++
				if c == '>' {
					return i
				} else if c == '-' {
					dashes, beginning = 1, false
					continue
				}
			}
		}
		dashes, beginning = 0, false
	}
	return -1
}

// The classes of bytes in a tag, as bits.
const (
	tagSpace = 1 << iota // white space
	tagSlash             // '/'
	tagGT                // '>'
	tagEq                // '='
)

// tagClass is the class of each byte in a tag, 0 for most.
var tagClass = [256]uint8{
	' ': tagSpace, '\t': tagSpace, '\n': tagSpace, '\r': tagSpace, '\f': tagSpace,
	'/': tagSlash, '>': tagGT, '=': tagEq,
}

// tag reads the tag whose name starts at p, one after its '<' (or "</"),
// and returns the end of its name and the index after its '>', or ok
// false when the html ends first. With save, it keeps in cv.attrs the
// attributes with a non-empty key (Tokenizer.readTag).
func (cv *Converter) tag(src []byte, p int, save bool) (nameEnd, end int, ok bool) {
	n := len(src)
	if save {
		cv.attrs = cv.attrs[:0]
	}
	i := p + 1
	for i < n && tagClass[src[i]]&(tagSpace|tagSlash|tagGT) == 0 {
		i++
	}
	if i >= n {
		return 0, 0, false
	}
	nameEnd = i
	for {
		for i < n && tagClass[src[i]] == tagSpace {
			i++
		}
		if i >= n {
			return 0, 0, false
		}
		if src[i] == '>' {
			return nameEnd, i + 1, true
		}
		// The key (Tokenizer.readTagAttrKey): a first '=' belongs to it.
		k0 := i
		if src[i] != '/' {
			for i++; i < n && tagClass[src[i]] == 0; i++ {
			}
			if i >= n {
				return 0, 0, false
			}
		}
		k1 := i
		// The value (Tokenizer.readTagAttrVal).
		v0, v1 := i, i
		for i < n && tagClass[src[i]] == tagSpace {
			i++
		}
		if i >= n {
			return 0, 0, false
		}
		switch src[i] {
		case '/':
			i++
		case '=':
			for i++; i < n && tagClass[src[i]] == tagSpace; i++ {
			}
			if i >= n {
				return 0, 0, false
			}
			switch q := src[i]; q {
			case '>':
			case '"', '\'':
				j := bytes.IndexByte(src[i+1:], q)
				if j < 0 {
					return 0, 0, false
				}
				v0, v1 = i+1, i+1+j
				i = v1 + 1
			default:
				v0 = i
				for i++; i < n && tagClass[src[i]]&(tagSpace|tagGT) == 0; i++ {
				}
				if i >= n {
					return 0, 0, false
				}
				v1 = i
				if src[i] != '>' {
					i++
				}
			}
		}
		if save && k1 > k0 {
			cv.attrs = append(cv.attrs, attr{k0, k1, v0, v1})
		}
	}
}

// selfClosing reports whether the start tag ending at end, with the
// attributes cv.attrs, is self-closing: it ends with "/>" and the '/' is
// not the last byte of its last attribute's value (Tokenizer.readStartTag).
// The Tokenizer keeps only the first of the attributes with the same key.
func (cv *Converter) selfClosing(src []byte, end int) bool {
	if src[end-2] != '/' {
		return false
	}
	last := len(cv.attrs) - 1
	if len(cv.attrs) > 16 {
		clear(cv.seen)
		if cv.seen == nil {
			cv.seen = make(map[string]bool)
		}
		for i, a := range cv.attrs {
			k := cv.lower(src[a.key0:a.key1])
			if !cv.seen[string(k)] {
				cv.seen[string(k)] = true
				last = i
			}
		}
	} else {
		for ; last > 0 && cv.repeated(src, last); last-- {
		}
	}
	return last < 0 || end-2 != cv.attrs[last].val1-1
}

// repeated reports whether attribute i's key is that of one before it.
func (cv *Converter) repeated(src []byte, i int) bool {
	k := src[cv.attrs[i].key0:cv.attrs[i].key1]
	for _, a := range cv.attrs[:i] {
		if equalLower(src[a.key0:a.key1], k) {
			return true
		}
	}
	return false
}

// equalLower reports whether a and b are equal but for ASCII case.
func equalLower(a, b []byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// lower returns b with ASCII letters lower-cased, in cv's buffer when it
// has upper-case ones.
func (cv *Converter) lower(b []byte) []byte {
	i := 0
	for i < len(b) && (b[i] < 'A' || b[i] > 'Z') {
		i++
	}
	if i == len(b) {
		return b
	}
	out := append(cv.lowBuf[:0], b...)
	for ; i < len(out); i++ {
		if c := out[i]; 'A' <= c && c <= 'Z' {
			out[i] = c + 'a' - 'A'
		}
	}
	cv.lowBuf = out
	return out
}

// rawKind is the kind of text that follows a start tag: raw text, up to
// the matching end tag (or the end, for plaintext).
type rawKind uint8

const (
	rawNone rawKind = iota
	rawScript
	rawStyle
	rawTextarea
	rawTitle
	rawIframe
	rawNoembed
	rawNoframes
	rawNoscript
	rawPlaintext
	rawXmp
)

var rawNames = [...]string{
	rawScript: "script", rawStyle: "style", rawTextarea: "textarea", rawTitle: "title", rawIframe: "iframe",
	rawNoembed: "noembed", rawNoframes: "noframes", rawNoscript: "noscript", rawPlaintext: "plaintext", rawXmp: "xmp",
}

// rawKindOf returns the kind of text that follows a start tag of the name
// a (Tokenizer.readStartTag: the name is one of these, in any case).
func rawKindOf(a atom.Atom) rawKind {
	switch a {
	case atom.Script:
		return rawScript
	case atom.Style:
		return rawStyle
	case atom.Textarea:
		return rawTextarea
	case atom.Title:
		return rawTitle
	case atom.Iframe:
		return rawIframe
	case atom.Noembed:
		return rawNoembed
	case atom.Noframes:
		return rawNoframes
	case atom.Noscript:
		return rawNoscript
	case atom.Plaintext:
		return rawPlaintext
	case atom.Xmp:
		return rawXmp
	}
	return rawNone
}

// decodeKind returns how the raw text of k is decoded.
func (k rawKind) decodeKind() decodeKind {
	if k == rawTextarea || k == rawTitle {
		return decodeRCDATA
	}
	return decodeRaw
}

// rawEnd returns the end of the raw text of kind k that starts at i: the
// index of its end tag's '<', or len(src) (Tokenizer.readRawOrRCDATA).
func rawEnd(src []byte, i int, k rawKind) int {
	switch k {
	case rawPlaintext:
		return len(src)
	case rawScript:
		return scriptEnd(src, i)
	}
	name := rawNames[k]
	for {
		j := bytes.IndexByte(src[i:], '<')
		if j < 0 {
			return len(src)
		}
		i += j + 1
		if i >= len(src) {
			return len(src)
		}
		if src[i] != '/' {
			continue
		}
		next, match := rawEndTag(src, i+1, name)
		if match {
			return i - 1
		}
		if next < 0 {
			return len(src)
		}
		i = next
	}
}

// rawEndTag reports whether the end tag of name, after its "</", starts
// at i, with a white space, '/' or '>' after the name; when not, it
// returns the index to read on from, or -1 when the html ends first
// (Tokenizer.readRawEndTag).
func rawEndTag(src []byte, i int, name string) (next int, match bool) {
	for j := 0; j < len(name); j++ {
		if i >= len(src) {
			return -1, false
		}
		if c := src[i]; c != name[j] && c != name[j]-('a'-'A') {
			return i, false
		}
		i++
	}
	if i >= len(src) {
		return -1, false
	}
	switch src[i] {
	case ' ', '\n', '\r', '\t', '\f', '/', '>':
		return 0, true
	}
	return i, false
}
