package htmltext_test

// The reference: the tokenizer-based converter that the package's scanner
// replaced, kept word for word (x/net/html's Tokenizer reads the html) so
// that the differential tests and FuzzAppend compare the two on any input.
// Only tests use it.

import (
	"bytes"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// refWidth is the reference's Width.
const refWidth = 78

// referenceConverter converts html to text. Its zero value is ready to use; it
// keeps its buffers from one Append to the next. A Converter is not safe
// for concurrent use: give each goroutine its own.
type referenceConverter struct {
	c    conv
	link []byte
}

// Append appends the text of src, an html document or fragment, to dst
// and returns the extended buffer. The text is UTF-8 (as src is read),
// with LF line breaks, and ends with one LF unless it is empty.
func (cv *referenceConverter) Append(dst, src []byte) []byte {
	c := &cv.c
	*c = conv{out: dst, start: len(dst), lists: c.lists[:0], link: cv.link[:0]}
	z := html.NewTokenizer(bytes.NewReader(src))
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			cv.link = c.link
			return c.finish()
		case html.TextToken:
			if c.skip > 0 {
				continue
			}
			if c.pre > 0 {
				c.preText(z.Text())
			} else {
				c.text(z.Text())
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			a := atom.Lookup(name)
			if c.skip > 0 {
				if a == c.skipTag && tt == html.StartTagToken {
					c.skip++
				}
				continue
			}
			var href, alt string
			hidden := false
			// TagAttr copies every attribute it reads: read them only
			// when one can matter.
			hasAttr = hasAttr && (a == atom.A || a == atom.Img || mayHide(z.Raw()))
			for hasAttr {
				var k, v []byte
				k, v, hasAttr = z.TagAttr()
				switch string(k) {
				case "href":
					if a == atom.A {
						href = string(v)
					}
				case "alt":
					if a == atom.Img {
						alt = string(v)
					}
				case "style":
					hidden = displayNone(v)
				case "hidden":
					hidden = true
				}
			}
			if hidden && tt == html.StartTagToken && !isVoid(a) {
				c.skip, c.skipTag = 1, a
				continue
			}
			c.open(a, tt == html.SelfClosingTagToken, href, alt)
		case html.EndTagToken:
			name, _ := z.TagName()
			a := atom.Lookup(name)
			if c.skip > 0 {
				if a == c.skipTag {
					c.skip--
				}
				continue
			}
			c.close(a)
		}
	}
}

// displayNone reports whether a style attribute hides its element.
func displayNone(style []byte) bool {
	s := strings.ToLower(string(style))
	s = strings.ReplaceAll(s, " ", "")
	return strings.Contains(s, "display:none") || strings.Contains(s, "visibility:hidden")
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

// isVoid reports whether elements named a have no end tag.
func isVoid(a atom.Atom) bool {
	switch a {
	case atom.Area, atom.Base, atom.Br, atom.Col, atom.Embed, atom.Hr, atom.Img, atom.Input,
		atom.Link, atom.Meta, atom.Source, atom.Track, atom.Wbr:
		return true
	}
	return false
}

// list is an open ul or ol.
type list struct {
	ordered bool
	n       int // the items so far
	indent  int // the indent of the enclosing content
}

// conv is one conversion's state.
type conv struct {
	out   []byte
	start int // len(out) before the text
	// col is the characters on the current line; trail the line breaks
	// that end the output (0 when the current line has text).
	col, trail int
	breaks     int    // line breaks wanted before the next word (1 or 2)
	space      bool   // a space wanted before the next word
	sep        string // written instead of the space before the next word on the line (a cell separator)
	marker     string // written before the next word, at the start of its line
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
	href      string // the open link's target, or ""
	inLink    bool
	link      []byte // the open link's text
}

// block asks for n line breaks before the next word.
func (c *conv) block(n int) {
	if c.cellStart {
		return
	}
	c.breaks = max(c.breaks, n)
	c.sep = ""
}

func (c *conv) open(a atom.Atom, selfClosing bool, href, alt string) {
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
		c.marker = strings.Repeat("#", int(a.String()[1]-'0')) + " "
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
			c.marker = "* "
			if l.ordered {
				c.marker = strconv.Itoa(l.n) + ". "
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
		c.href, c.inLink, c.link = strings.TrimSpace(href), true, c.link[:0]
	case atom.Img:
		if alt = strings.TrimSpace(alt); alt != "" {
			c.text([]byte(alt))
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
		c.marker = ""
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
		c.marker = ""
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
	href, text := c.href, strings.TrimSpace(string(c.link))
	c.inLink, c.href = false, ""
	low := strings.ToLower(href)
	switch {
	case href == "" || href[0] == '#' || strings.HasPrefix(low, "javascript:") || strings.HasPrefix(low, "cid:"):
		return
	case text == "":
		c.space = true
		c.word(href)
		return
	}
	if strings.EqualFold(bareURL(text), bareURL(href)) {
		return
	}
	c.space = true
	c.word("(" + href + ")")
}

// bareURL is u without its scheme and final slash, for comparing a link's
// text with its target.
func bareURL(u string) string {
	u = strings.TrimSuffix(u, "/")
	for _, p := range []string{"mailto:", "tel:", "https://", "http://"} {
		if len(u) >= len(p) && strings.EqualFold(u[:len(p)], p) {
			return u[len(p):]
		}
	}
	return u
}

// text writes a text token outside pre: its words, with white space
// collapsed.
func (c *conv) text(t []byte) {
	if bytes.Contains(t, nbsp) {
		t = spaceNBSP(t)
	}
	for len(t) > 0 {
		i := 0
		for i < len(t) && isSpace(t[i]) {
			i++
		}
		if i > 0 {
			c.space = true
			t = t[i:]
			continue
		}
		for i < len(t) && !isSpace(t[i]) {
			i++
		}
		c.wordBytes(t[:i])
		t = t[i:]
	}
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

// nbsp is U+00A0 NO-BREAK SPACE (&nbsp;), which e-mail html uses for
// spacing; in text it is a space.
var nbsp = []byte("\u00a0")

// spaceNBSP replaces each no-break space of t with a space, in place.
func spaceNBSP(t []byte) []byte {
	out := t[:0]
	for i := 0; i < len(t); i++ {
		if t[i] == nbsp[0] && i+1 < len(t) && t[i+1] == nbsp[1] {
			out = append(out, ' ')
			i++
			continue
		}
		out = append(out, t[i])
	}
	return out
}

func isSpace(b byte) bool {
	return b == ' ' || b == '\t' || b == '\n' || b == '\r' || b == '\f'
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
func (c *conv) word(w string) { c.wordBytes([]byte(w)) }

// wordBytes is word for a word in a buffer of the tokenizer's.
func (c *conv) wordBytes(w []byte) {
	if c.inLink {
		if c.space && len(c.link) > 0 {
			c.link = append(c.link, ' ')
		}
		c.link = append(c.link, w...)
	}
	n := utf8.RuneCount(w)
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
			case c.col+len(gap)+n > refWidth:
				c.newline() // wrap at the gap
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
		if c.marker != "" {
			c.out = append(c.out, c.marker...)
			c.col += len(c.marker)
			if len(c.lists) > 0 && c.marker[0] != '#' {
				c.indent += len(c.marker) // continuation lines under the item's text
			}
			c.marker = ""
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
