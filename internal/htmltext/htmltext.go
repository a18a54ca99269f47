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
// tokenizer reads it (raw text elements and script's escapes, comments,
// bogus comments, unterminated tags, attribute quoting, a repeated
// attribute, character references with and without their semicolon, in
// text and in attribute values). It does so with its own scanner: one
// pass over the bytes of the html (scan.go, script.go), which copies only
// what it writes and allocates nothing once a Converter has converted a
// document like it. A Converter also remembers the tags it has read, and
// does not read again a tag whose bytes it has seen (memo.go): e-mail
// html, converted recipient after recipient, is mostly the same tags.
// The named character references are x/net/html's table, read through
// html.UnescapeString.
//
// The package's tests keep the tokenizer-based converter this scanner
// replaced as the reference (reference_test.go, with x/net/html's
// Tokenizer): on every html of the module's test corpora (TestReference)
// and on any input (FuzzAppend), the two give the same text, byte for
// byte. There is no class of input where they may differ.
//
// It does not lay out CSS, tables or columns: it aims at the text a
// reader of a plain-text mail client wants, not at a rendering.
//
// It imports nothing from the module.
package htmltext

import "bytes"

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
	memo                                      memo              // the tags read so far
	tok                                       token             // the token scan read
	href, alt                                 []byte            // its href and alt values, decoded
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
		var tk *token
		var href, alt []byte
		if src[pos] == '<' && pos+2 < n && (isLetter(src[pos+1]) || src[pos+1] == '/' && isLetter(src[pos+2])) {
			// A tag: one read before, when its bytes up to the first '>'
			// are those of one (memo.go).
			if e := bytes.IndexByte(src[pos:], '>'); e >= 0 {
				t := src[pos : pos+e+1]
				if read := cv.memo.find(t); read != nil {
					tk, href, alt = &read.tok, cv.memo.values(read.href), cv.memo.values(read.alt)
				} else {
					var ok bool
					if tk, ok = cv.scan(src, pos); !ok {
						break // the html ends in the tag, which says nothing
					}
					href, alt = cv.href, cv.alt
					if tk.len == len(t) {
						cv.memo.add(t, tk, href, alt)
					}
				}
			}
		}
		if tk == nil {
			var ok bool
			if tk, ok = cv.scan(src, pos); !ok {
				break // the html ends in a token, which says nothing
			}
			href, alt = cv.href, cv.alt
		}
		cv.apply(tk, src[pos:pos+tk.len], href, alt)
		pos += tk.len
		raw = tk.raw
	}
	out := c.finish()
	cv.release()
	return out
}

// maxKept bounds the buffers a Converter keeps from one Append to the
// next: a document that grew one past it (a huge text with a reference,
// a tag of a hundred thousand attributes) does not leave it behind.
const maxKept = 64 << 10

// release drops the buffers that grew past maxKept.
func (cv *Converter) release() {
	for _, b := range [...]*[]byte{&cv.textBuf, &cv.hrefBuf, &cv.altBuf, &cv.attrBuf, &cv.lowBuf, &cv.c.link, &cv.c.href, &cv.c.tmp, &cv.c.marker} {
		if cap(*b) > maxKept {
			*b = nil
		}
	}
	if cap(cv.attrs) > maxKept/32 { // 32 bytes an attribute
		cv.attrs = nil
	}
	if cap(cv.c.lists) > maxKept/32 {
		cv.c.lists = nil
	}
	if len(cv.seen) > maxKept/64 {
		cv.seen = nil
	}
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
