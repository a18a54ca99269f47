package htmltext

// One token at a time: what it is (scan) and what it writes (apply).

import (
	"golang.org/x/net/html/atom"
)

// tokenKind is the kind of a token.
type tokenKind uint8

const (
	tokenSpace   tokenKind = iota // text of white space only
	tokenText                     // other text
	tokenStart                    // a start tag
	tokenEnd                      // an end tag
	tokenNothing                  // a comment, doctype, bogus comment or "</>"
)

// token is a token of the html and what its bytes say.
type token struct {
	len  int
	kind tokenKind
	raw  rawKind // the raw text due after a start tag
	a    atom.Atom
	// A start tag's meaning: self-closing, hiding its element.
	selfClosing, hidden bool
}

// scan reads the token at pos. It reports false when the html ends in it
// (an unterminated tag or comment), which then says nothing.
func (cv *Converter) scan(src []byte, pos int) (*token, bool) {
	n := len(src)
	tk := &cv.tok
	*tk, cv.href, cv.alt = token{}, nil, nil
	if !(src[pos] == '<' && pos+1 < n && startsMarkup(src[pos+1])) {
		// Text, up to the next markup. Between tags, e-mail html mostly
		// has white space.
		k := pos + skipSpace(src[pos:])
		tk.kind = tokenSpace
		if !(k+1 < n && src[k] == '<' && startsMarkup(src[k+1])) {
			k = markup(src, k)
			tk.kind = tokenText
		}
		tk.len = k - pos
		return tk, true
	}
	end := -1
	switch c := src[pos+1]; {
	case isLetter(c):
		return cv.scanStart(src, pos)
	case c == '/':
		switch {
		case pos+2 >= n: // "</" at the end is text
			tk.kind, tk.len = tokenText, n-pos
			return tk, true
		case src[pos+2] == '>':
			end = pos + 3
		case isLetter(src[pos+2]):
			nameEnd, e, ok := cv.tag(src, pos+2, false)
			if !ok {
				return nil, false
			}
			tk.kind, tk.a = tokenEnd, cv.lookup(src[pos+2:nameEnd])
			tk.len = e - pos
			return tk, true
		default: // a bogus comment
			end = closeAngle(src, pos+2)
		}
	case c == '!':
		switch {
		case pos+3 >= n:
		case src[pos+2] == '-' && src[pos+3] == '-':
			end = commentEnd(src, pos+4)
		default: // a doctype, CDATA section or bogus comment
			end = closeAngle(src, pos+2)
		}
	default: // '?', a bogus comment
		end = closeAngle(src, pos+2)
	}
	if end < 0 {
		return nil, false
	}
	tk.kind, tk.len = tokenNothing, end-pos
	return tk, true
}

// scanStart reads the start tag at k.
func (cv *Converter) scanStart(src []byte, k int) (*token, bool) {
	nameEnd, end, ok := cv.tag(src, k+1, true)
	if !ok {
		return nil, false
	}
	tk := &cv.tok
	tk.kind, tk.len = tokenStart, end-k
	a := cv.lookup(src[k+1 : nameEnd])
	tk.a, tk.raw, tk.selfClosing = a, rawKindOf(a), cv.selfClosing(src, end)
	if len(cv.attrs) == 0 {
		return tk, true
	}
	// The first attribute of each key counts, in their order.
	var seenHref, seenAlt, seenStyle, seenHidden bool
	hidden := false
	for i := range cv.attrs {
		at := &cv.attrs[i]
		key := src[at.key0:at.key1]
		switch len(key) {
		case 3:
			if a == atom.Img && !seenAlt && equalLower(key, []byte("alt")) {
				seenAlt = true
				cv.alt = cv.decode(&cv.altBuf, src[at.val0:at.val1], decodeAttribute)
			}
		case 4:
			if a == atom.A && !seenHref && equalLower(key, []byte("href")) {
				seenHref = true
				cv.href = cv.decode(&cv.hrefBuf, src[at.val0:at.val1], decodeAttribute)
			}
		case 5:
			if key[0]|0x20 == 's' && !seenStyle && equalLower(key, []byte("style")) {
				seenStyle = true
				hidden = cv.displayNone(src[at.val0:at.val1])
			}
		case 6:
			if key[0]|0x20 == 'h' && !seenHidden && equalLower(key, []byte("hidden")) {
				seenHidden = true
				hidden = true
			}
		}
	}
	// The reference reads the attributes of a tag other than a and img
	// only when the tag may hide its element.
	tk.hidden = hidden && (a == atom.A || a == atom.Img || mayHide(src[k:end]))
	return tk, true
}

// apply converts the token tk, whose bytes are t; href and alt are a
// start tag's values.
func (cv *Converter) apply(tk *token, t, href, alt []byte) {
	c := &cv.c
	switch tk.kind {
	case tokenSpace:
		cv.space(t)
	case tokenText:
		cv.text(t, decodeText)
	case tokenStart:
		switch {
		case c.skip > 0:
			if tk.a == c.skipTag && !tk.selfClosing {
				c.skip++
			}
		case tk.hidden && !tk.selfClosing && !isVoid(tk.a):
			c.skip, c.skipTag = 1, tk.a
		default:
			c.open(tk.a, tk.selfClosing, href, alt)
		}
	case tokenEnd:
		switch {
		case c.skip == 0:
			c.close(tk.a)
		case tk.a == c.skipTag:
			c.skip--
		}
	}
}

// lookup returns the atom of a tag name, 0 for a name that has none.
// The names e-mail html uses most are found without hashing.
func (cv *Converter) lookup(name []byte) atom.Atom {
	switch string(name) {
	case "a":
		return atom.A
	case "b":
		return atom.B
	case "p":
		return atom.P
	case "br":
		return atom.Br
	case "td":
		return atom.Td
	case "tr":
		return atom.Tr
	case "th":
		return atom.Th
	case "li":
		return atom.Li
	case "h1":
		return atom.H1
	case "h2":
		return atom.H2
	case "h3":
		return atom.H3
	case "div":
		return atom.Div
	case "img":
		return atom.Img
	case "span":
		return atom.Span
	case "font":
		return atom.Font
	case "table":
		return atom.Table
	case "tbody":
		return atom.Tbody
	case "strong":
		return atom.Strong
	case "center":
		return atom.Center
	}
	if len(name) > 25 { // longer than any atom
		return 0
	}
	return atom.Lookup(cv.lower(name))
}

// isVoid reports whether elements named a have no end tag.
func isVoid(a atom.Atom) bool {
	switch a {
	case atom.Area, atom.Base, atom.Br, atom.Col, atom.Embed, atom.Hr, atom.Img, atom.Input,
		atom.Link, atom.Meta, atom.Source, atom.Track, atom.Wbr:
		return true
	}
	return false
}
