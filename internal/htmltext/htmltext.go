// Package htmltext turns an html body into readable plain text, for the
// text/plain alternative of a message given as html only: paragraphs and
// line breaks where the html has blocks, headings marked with "#", list
// items with "*" or their number, table rows on one line with " | "
// between the cells, links written "text (url)", images as their alt
// text, entities decoded, and no style, script, head or hidden
// (display:none) content. Lines are wrapped at white space to at most
// Width characters where the words allow it (a longer word, such as a
// URL, stays whole on its own line).
//
// It reads html as golang.org/x/net/html's tokenizer does, not as its
// parser: no tree is built, and malformed html is read as a browser's
// tokenizer reads it (raw text elements, comments, bogus comments,
// unterminated tags and attribute quoting included). It does so with its
// own scanner, one pass over the bytes of the html that copies only the
// text it writes and, once a Converter has converted a document, does not
// allocate for the next ones like it. The package's tests keep the
// tokenizer-based converter it replaced as a reference: on every html of
// the module's test corpora, and on any input in FuzzAppend, both give
// the same text, byte for byte. The named character references are
// x/net/html's table (read through html.UnescapeString).
//
// It does not lay out CSS, tables or columns: it aims at the text a
// reader of a plain-text mail client wants, not at a rendering.
//
// It imports nothing from the module.
package htmltext

import (
	"bytes"

	"golang.org/x/net/html/atom"
)

// Width is the longest line Append writes when the words allow it, in
// characters (RFC 5322 §2.1.1 recommends 78).
const Width = 78

// Converter converts html to text. Its zero value is ready to use; it
// keeps its buffers from one Append to the next. A Converter is not safe
// for concurrent use: give each goroutine its own.
type Converter struct {
	c     conv
	attrs []attr // the attributes of the current start tag
	// Buffers for decoded text, attribute values and lower-cased names.
	textBuf, hrefBuf, altBuf, attrBuf, lowBuf []byte
	seen                                      map[string]bool   // attribute keys, for a tag with many
	entities                                  map[string]string // named references read so far (named)
}

// Append appends the text of src, an html document or fragment, to dst
// and returns the extended buffer. The text is UTF-8 (as src is read),
// with LF line breaks, and ends with one LF unless it is empty. It reads
// src and never modifies it.
func (cv *Converter) Append(dst, src []byte) []byte {
	c := &cv.c
	c.reset(dst)
	n := len(src)
	pos := 0
	raw := rawNone // the kind of raw text due after the last start tag
	for {
		if raw != rawNone {
			end := rawEnd(src, pos, raw)
			if end > pos {
				cv.text(src[pos:end], raw.decodeKind())
			}
			pos, raw = end, rawNone
		}
		if pos >= n {
			break
		}
		// Between tags, e-mail html mostly has white space.
		k := pos + skipSpace(src[pos:])
		if k+1 < n && src[k] == '<' && startsMarkup(src[k+1]) {
			if k > pos {
				cv.space(src[pos:k])
			}
		} else {
			k = markup(src, k)
			if k > pos {
				cv.text(src[pos:k], decodeText)
			}
		}
		if k >= n {
			break
		}
		end := -1
		switch c := src[k+1]; {
		case isLetter(c):
			end, raw = cv.startTag(src, k)
		case c == '/':
			switch {
			case k+2 >= n: // "</" at the end is text
				cv.text(src[k:], decodeText)
			case src[k+2] == '>':
				end = k + 3
			case isLetter(src[k+2]):
				end = cv.endTag(src, k)
			default: // a bogus comment
				end = closeAngle(src, k+2)
			}
		case c == '!':
			switch {
			case k+3 >= n:
			case src[k+2] == '-' && src[k+3] == '-':
				end = commentEnd(src, k+4)
			default: // a doctype, CDATA section or bogus comment
				end = closeAngle(src, k+2)
			}
		default: // '?', a bogus comment
			end = closeAngle(src, k+2)
		}
		if end < 0 {
			break // the html ends in the token, which says nothing
		}
		pos = end
	}
	return c.finish()
}

// space converts a text token of white space.
func (cv *Converter) space(t []byte) {
	switch c := &cv.c; {
	case c.skip > 0:
	case c.pre > 0:
		c.preText(cv.decode(&cv.textBuf, t, decodeText))
	default:
		c.space = true
	}
}

// text converts a text token.
func (cv *Converter) text(t []byte, kind decodeKind) {
	c := &cv.c
	if c.skip > 0 {
		return
	}
	if kind == decodeText && c.pre == 0 {
		// White space is white space decoded, and so is a CR: outside
		// pre, only a character reference changes what text writes.
		i := skipSpace(t)
		if i > 0 {
			c.space = true
		}
		if t = t[i:]; len(t) == 0 {
			return
		}
		if bytes.IndexByte(t, '&') < 0 {
			c.text(t)
			return
		}
	}
	t = cv.decode(&cv.textBuf, t, kind)
	if c.pre > 0 {
		c.preText(t)
	} else {
		c.text(t)
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

// startTag converts the start tag at k and returns the index after it
// and the kind of raw text that follows it, or -1 when the html ends in
// it.
func (cv *Converter) startTag(src []byte, k int) (int, rawKind) {
	nameEnd, end, ok := cv.tag(src, k+1, true)
	if !ok {
		return -1, rawNone
	}
	c := &cv.c
	a := cv.lookup(src[k+1 : nameEnd])
	raw := rawKindOf(a)
	selfClosing := cv.selfClosing(src, end)
	if c.skip > 0 {
		if a == c.skipTag && !selfClosing {
			c.skip++
		}
		return end, raw
	}
	var href, alt []byte
	hidden := false
	if len(cv.attrs) > 0 {
		// The first attribute of each key counts, in their order.
		var seenHref, seenAlt, seenStyle, seenHidden bool
		for i := range cv.attrs {
			at := &cv.attrs[i]
			key := src[at.key0:at.key1]
			switch len(key) {
			case 3:
				if a == atom.Img && !seenAlt && equalLower(key, []byte("alt")) {
					seenAlt = true
					alt = cv.decode(&cv.altBuf, src[at.val0:at.val1], decodeAttribute)
				}
			case 4:
				if a == atom.A && !seenHref && equalLower(key, []byte("href")) {
					seenHref = true
					href = cv.decode(&cv.hrefBuf, src[at.val0:at.val1], decodeAttribute)
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
		// The reference reads the attributes of a tag other than a and
		// img only when the tag may hide its element.
		if hidden && a != atom.A && a != atom.Img && !mayHide(src[k:end]) {
			hidden = false
		}
	}
	if hidden && !selfClosing && !isVoid(a) {
		c.skip, c.skipTag = 1, a
		return end, raw
	}
	c.open(a, selfClosing, href, alt)
	return end, raw
}

// endTag converts the end tag at k and returns the index after it, or -1
// when the html ends in it.
func (cv *Converter) endTag(src []byte, k int) int {
	nameEnd, end, ok := cv.tag(src, k+2, false)
	if !ok {
		return -1
	}
	c := &cv.c
	a := cv.lookup(src[k+2 : nameEnd])
	if c.skip > 0 {
		if a == c.skipTag {
			c.skip--
		}
		return end
	}
	c.close(a)
	return end
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
