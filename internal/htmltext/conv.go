package htmltext

// The conversion proper: what each element, text and link writes. The
// scanner (scan.go) calls open, close, text and preText in document
// order.

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"strconv"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html/atom"
)

// list is an open ul or ol.
type list struct {
	ordered bool
	n       int // the items so far
	indent  int // the indent of the enclosing content
}

// conv is one conversion's state. Its buffers (out excepted) are kept
// from one conversion to the next.
type conv struct {
	out   []byte
	start int // len(out) before the text
	// col is the characters on the current line; trail the line breaks
	// that end the output (0 when the current line has text).
	col, trail int
	breaks     int    // line breaks wanted before the next word (1 or 2)
	space      bool   // a space wanted before the next word
	sep        string // written instead of the space before the next word on the line (a cell separator)
	marker     []byte // written before the next word, at the start of its line
	indent     int    // spaces at the start of each line
	quote      int    // blockquote depth: "> " per level at the start of each line
	pre        int
	cells      int // cells opened in the current table row
	// cellStart says a cell after a row's first has no text yet: the
	// blocks that open in it stay on the row's line.
	cellStart bool
	lists     []list
	skip      int // depth in a skipped element of kind skipTag
	skipTag   atom.Atom
	href      []byte // the open link's target, or empty
	inLink    bool
	link      []byte // the open link's text
	tmp       []byte // a word being put together
}

// reset starts a conversion appending to dst.
func (c *conv) reset(dst []byte) {
	*c = conv{
		out: dst, start: len(dst),
		marker: c.marker[:0], lists: c.lists[:0], href: c.href[:0], link: c.link[:0], tmp: c.tmp[:0],
	}
}

// block asks for n line breaks before the next word.
func (c *conv) block(n int) {
	if c.cellStart {
		return
	}
	c.breaks = max(c.breaks, n)
	c.sep = ""
}

// headingMarks holds the marks of h1 to h6.
const headingMarks = "######"

func (c *conv) open(a atom.Atom, selfClosing bool, href, alt []byte) {
	switch a {
	case atom.Style, atom.Script, atom.Head, atom.Title, atom.Template, atom.Svg, atom.Object:
		if !selfClosing {
			c.skip, c.skipTag = 1, a
		}
	case atom.Br:
		c.lineBreak()
	case atom.Table:
		c.cellStart = false
		c.block(2)
	case atom.P, atom.Dl, atom.Figure:
		c.block(2)
	case atom.Pre:
		c.block(2)
		c.pre++
	case atom.Blockquote:
		c.block(2)
		c.quote++
	case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
		c.block(2)
		c.marker = append(append(c.marker[:0], headingMarks[:a.String()[1]-'0']...), ' ')
	case atom.Hr:
		c.block(2)
		c.word("---")
		c.block(2)
	case atom.Ul, atom.Ol:
		if len(c.lists) == 0 {
			c.block(2)
		} else {
			c.block(1)
		}
		c.lists = append(c.lists, list{ordered: a == atom.Ol, indent: c.indent})
	case atom.Li:
		c.block(1)
		if n := len(c.lists); n > 0 {
			l := &c.lists[n-1]
			l.n++
			c.indent = l.indent
			if l.ordered {
				c.marker = append(strconv.AppendInt(c.marker[:0], int64(l.n), 10), ". "...)
			} else {
				c.marker = append(c.marker[:0], "* "...)
			}
		}
	case atom.Tr:
		c.cellStart = false
		c.block(1)
		c.cells = 0
	case atom.Td, atom.Th:
		if c.cells > 0 && c.trail == 0 {
			// The blocks that closed in the cell before end nothing.
			c.breaks, c.sep = 0, " | "
		}
		c.cellStart = true
		c.cells++
	case atom.Div, atom.Section, atom.Article, atom.Header, atom.Footer, atom.Nav, atom.Address,
		atom.Dt, atom.Dd, atom.Center, atom.Form, atom.Caption, atom.Main, atom.Aside, atom.Figcaption, atom.Body:
		c.block(1)
	case atom.A:
		c.href, c.inLink, c.link = append(c.href[:0], bytes.TrimSpace(href)...), true, c.link[:0]
	case atom.Img:
		if alt = bytes.TrimSpace(alt); len(alt) > 0 {
			c.text(alt)
			c.space = true
		}
	}
}

func (c *conv) close(a atom.Atom) {
	switch a {
	case atom.Table:
		c.cellStart = false
		c.block(2)
	case atom.P, atom.Dl, atom.Figure, atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
		c.block(2)
		c.marker = c.marker[:0]
	case atom.Pre:
		c.block(2)
		c.pre = max(0, c.pre-1)
	case atom.Blockquote:
		c.block(2)
		c.quote = max(0, c.quote-1)
	case atom.Ul, atom.Ol:
		if n := len(c.lists); n > 0 {
			c.indent = c.lists[n-1].indent
			c.lists = c.lists[:n-1]
		}
		c.marker = c.marker[:0]
		if len(c.lists) == 0 {
			c.block(2)
		} else {
			c.block(1)
		}
	case atom.Tr:
		c.cellStart = false
		c.block(1)
	case atom.Li, atom.Div, atom.Section, atom.Article, atom.Header, atom.Footer, atom.Nav,
		atom.Address, atom.Dt, atom.Dd, atom.Center, atom.Form, atom.Caption, atom.Main, atom.Aside, atom.Figcaption:
		c.block(1)
	case atom.A:
		if c.inLink {
			c.endLink()
		}
	}
}

// endLink writes the closing link's target after its text, unless the
// text says it already.
func (c *conv) endLink() {
	href, text := c.href, bytes.TrimSpace(c.link)
	c.inLink = false
	switch {
	case len(href) == 0 || href[0] == '#' || hasLowerPrefix(href, "javascript:") || hasLowerPrefix(href, "cid:"):
		c.href = href[:0]
		return
	case len(text) == 0:
		c.space = true
		c.wordBytes(href)
		c.href = href[:0]
		return
	}
	if bytes.EqualFold(bareURL(text), bareURL(href)) {
		c.href = href[:0]
		return
	}
	c.space = true
	c.tmp = append(append(append(c.tmp[:0], '('), href...), ')')
	c.wordBytes(c.tmp)
	c.href = href[:0]
}

// hasLowerPrefix reports whether s, lower-cased rune by rune as
// strings.ToLower does, starts with the ASCII prefix.
func hasLowerPrefix(s []byte, prefix string) bool {
	for i := 0; i < len(prefix); i++ {
		if len(s) == 0 {
			return false
		}
		r, n := rune(s[0]), 1
		if r >= utf8.RuneSelf {
			r, n = utf8.DecodeRune(s)
		}
		if unicode.ToLower(r) != rune(prefix[i]) {
			return false
		}
		s = s[n:]
	}
	return true
}

// bareURL is u without its scheme and final slash, for comparing a link's
// text with its target.
func bareURL(u []byte) []byte {
	u = bytes.TrimSuffix(u, []byte("/"))
	for _, p := range [...]string{"mailto:", "tel:", "https://", "http://"} {
		if len(u) >= len(p) && bytes.EqualFold(u[:len(p)], []byte(p)) {
			return u[len(p):]
		}
	}
	return u
}

// text writes a text token outside pre: its words, with white space
// collapsed. A no-break space (U+00A0, &nbsp;), which e-mail html uses
// for spacing, is a space in text.
func (c *conv) text(t []byte) {
	i := 0
	for i < len(t) {
		switch textClass[t[i]] {
		case classSpace:
			c.space = true
			i++
			continue
		case classNBSP:
			if i+1 < len(t) && t[i+1] == 0xa0 {
				c.space = true
				i += 2
				continue
			}
		}
		ascii := t[i] < utf8.RuneSelf
		j := i + 1
		for ; j < len(t); j++ {
			k := textClass[t[j]]
			if k == 0 {
				continue
			}
			if k == classSpace || k == classNBSP && j+1 < len(t) && t[j+1] == 0xa0 {
				break
			}
			ascii = false
		}
		n := j - i
		if !ascii {
			n = utf8.RuneCount(t[i:j])
		}
		c.wordN(t[i:j], n)
		i = j
	}
}

// The classes of bytes in text: white space, the first byte of a
// no-break space (0xC2 0xA0), and the others of 0x80 and above.
const (
	classSpace = 1 + iota
	classNBSP
	classHigh
)

// textClass is the class of each byte in text, 0 for ASCII but white
// space.
var textClass = func() (t [256]uint8) {
	for b := 0x80; b < 0x100; b++ {
		t[b] = classHigh
	}
	t[' '], t['\t'], t['\n'], t['\r'], t['\f'] = classSpace, classSpace, classSpace, classSpace, classSpace
	t[0xc2] = classNBSP
	return t
}()

// skipSpace returns the index of the first byte of t that is not white
// space, or len(t). Runs of spaces, the indentation of html, go 8 bytes
// at a time.
func skipSpace(t []byte) int {
	i := 0
	for i < len(t) {
		if i+8 <= len(t) {
			x := binary.LittleEndian.Uint64(t[i:]) ^ 0x2020202020202020
			if x == 0 {
				i += 8
				continue
			}
			i += bits.TrailingZeros64(x) / 8
		}
		if textClass[t[i]] != classSpace {
			break
		}
		i++
	}
	return i
}

// preText writes a text token inside pre, its lines as they are.
func (c *conv) preText(t []byte) {
	for len(t) > 0 {
		line, rest, nl := bytes.Cut(t, []byte{'\n'})
		if s := bytes.TrimRight(line, " \t\r"); len(s) > 0 {
			c.wordBytes(s)
		}
		if nl {
			c.lineBreak()
		}
		t = rest
	}
}

// lineBreak ends the current line (br), at most one empty line in a row.
func (c *conv) lineBreak() {
	if len(c.out) == c.start || c.trail >= 2 {
		return
	}
	c.newline()
	c.breaks, c.space, c.sep = 0, false, ""
}

func (c *conv) newline() {
	c.out = append(c.out, '\n')
	c.trail++
	c.col = 0
}

// word writes w, after the breaks or the space wanted, wrapping the line
// when w does not fit on it.
func (c *conv) word(w string) {
	c.tmp = append(c.tmp[:0], w...)
	c.wordBytes(c.tmp)
}

// wordBytes is word for a word in a buffer.
func (c *conv) wordBytes(w []byte) { c.wordN(w, utf8.RuneCount(w)) }

// wordN is wordBytes for a word of n characters.
func (c *conv) wordN(w []byte, n int) {
	if c.col > 0 && c.trail == 0 && c.breaks == 0 && c.sep == "" && !c.inLink {
		// The common case: a word on the line, after a space or not.
		if !c.space {
			c.out = append(c.out, w...)
			c.col += n
			c.cellStart = false
			return
		}
		if c.col+1+n <= Width {
			c.out = append(append(c.out, ' '), w...)
			c.col += 1 + n
			c.space, c.cellStart = false, false
			return
		}
	}
	if c.inLink {
		if c.space && len(c.link) > 0 {
			c.link = append(c.link, ' ')
		}
		c.link = append(c.link, w...)
	}
	if len(c.out) > c.start {
		for c.trail < c.breaks {
			c.newline()
		}
		if c.trail == 0 {
			gap := c.sep
			if gap == "" && c.space {
				gap = " "
			}
			switch {
			case gap == "":
			case c.col+len(gap)+n > Width:
				c.newline() // wrap at the gap
			case len(gap) == 1:
				c.out = append(c.out, ' ')
				c.col++
			default:
				c.out = append(c.out, gap...)
				c.col += len(gap)
			}
		}
	}
	if c.col == 0 {
		for range c.quote {
			c.out = append(c.out, "> "...)
			c.col += 2
		}
		for range c.indent {
			c.out = append(c.out, ' ')
			c.col++
		}
		if len(c.marker) > 0 {
			c.out = append(c.out, c.marker...)
			c.col += len(c.marker)
			if len(c.lists) > 0 && c.marker[0] != '#' {
				c.indent += len(c.marker) // continuation lines under the item's text
			}
			c.marker = c.marker[:0]
		}
	}
	c.out = append(c.out, w...)
	c.col += n
	c.trail, c.breaks, c.space, c.sep, c.cellStart = 0, 0, false, "", false
}

// finish ends the text with one line break.
func (c *conv) finish() []byte {
	if c.inLink {
		c.endLink()
	}
	out := c.out
	for len(out) > c.start && (out[len(out)-1] == '\n' || out[len(out)-1] == ' ') {
		out = out[:len(out)-1]
	}
	if len(out) > c.start {
		out = append(out, '\n')
	}
	c.out = nil
	return out
}
