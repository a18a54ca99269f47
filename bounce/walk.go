package bounce

// The MIME walk: one pass over the message, line by line, with the
// boundaries of the open multiparts on a stack. It keeps the headers, the
// leaves' decoded text up to the limits, and the headers of returned
// messages; it discards everything else as it goes, so that the memory it
// takes does not grow with the message.

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"io"
	"mime/quotedprintable"
	"strings"
)

// The limits of Parse, documented in doc.go's Limits section.
const (
	// maxRead is the most Parse reads from its reader.
	maxRead = 8 << 20
	// maxHeaderBytes is the most field text kept of one header block.
	maxHeaderBytes = 64 << 10
	// maxPartBytes is the most raw bytes kept of one leaf part.
	maxPartBytes = 128 << 10
	// maxKeptBytes is the most raw bytes kept of all leaf parts together.
	maxKeptBytes = 512 << 10
	// maxParts is the most leaf parts kept.
	maxParts = 64
	// maxDepth is the deepest nesting of multiparts and messages read.
	maxDepth = 8
	// maxLine is the longest line read as one; longer lines are cut.
	maxLine = 8 << 10
	// maxRecipients is the most recipients a Report lists.
	maxRecipients = 1000
)

// part is one leaf of the message.
type part struct {
	ctype    string            // lower-case media type, "text/plain" by default
	params   map[string]string // its parameters
	body     []byte            // decoded, at most maxPartBytes before decoding
	returned bool              // inside a returned message
	preamble bool              // a multipart's preamble, kept as text/plain
}

// message is what the walk keeps of a message.
type message struct {
	hdr      header   // the top-level header
	parts    []*part  // the leaves, in order
	returned []header // the headers of the returned messages, in order
	// nested tells, for each of returned, whether it was inside
	// another returned message (a message that the returned one quoted).
	nested []bool
	report string // report-type of the first multipart/report, lower case
}

// walker reads the message line by line.
type walker struct {
	br       *bufio.Reader
	line     []byte // the current line, without its line end
	pending  bool   // line is read but not consumed
	eof      bool
	kept     int
	msg      *message
	bounds   [][]byte // "--"+boundary of the open multiparts, outermost first
	hit      int      // index in bounds of the boundary line just read, or -1
	hitClose bool
	nparts   int
}

// walk reads r (at most maxRead bytes of it) into a message.
func walk(r io.Reader) *message {
	w := &walker{
		br:  bufio.NewReaderSize(&eolReader{r: io.LimitReader(r, maxRead)}, maxLine),
		msg: &message{},
		hit: -1,
	}
	w.msg.hdr = w.entity(0, false, true)
	return w.msg
}

// next reads the next line into w.line; false at the end of input.
func (w *walker) next() bool {
	if w.pending {
		w.pending = false
		return true
	}
	if w.eof {
		return false
	}
	b, err := w.br.ReadSlice('\n')
	if len(b) == 0 && err != nil {
		w.eof = true
		return false
	}
	if err == nil {
		b = b[:len(b)-1]
	}
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	w.line = b
	return true
}

// unread makes the current line the next one again. The line is copied,
// as the reader's buffer moves on.
func (w *walker) unread() {
	w.line = append([]byte(nil), w.line...)
	w.pending = true
}

// boundary reports whether the current line is a boundary of an open
// multipart, setting w.hit and w.hitClose.
func (w *walker) boundary() bool {
	l := w.line
	if len(l) < 3 || l[0] != '-' || l[1] != '-' {
		return false
	}
	for i := len(w.bounds) - 1; i >= 0; i-- {
		b := w.bounds[i]
		if !bytes.HasPrefix(l, b) {
			continue
		}
		rest := l[len(b):]
		closing := bytes.HasPrefix(rest, []byte("--"))
		if closing {
			rest = rest[2:]
		}
		if len(bytes.TrimSpace(rest)) != 0 {
			continue
		}
		w.hit, w.hitClose = i, closing
		return true
	}
	return false
}

// readHeader reads a header block up to its blank line. A boundary line
// or a line that is no header field ends it and is left to be read
// again (the latter as the body's first line).
func (w *walker) readHeader(top bool) header {
	hb := headerBuilder{limit: maxHeaderBytes, trace: true}
	first := true
	for w.next() {
		if first && top && bytes.HasPrefix(w.line, []byte("From ")) {
			first = false
			continue // an mbox separator
		}
		first = false
		if top && len(hb.h) == 0 && !hb.dropped && len(bytes.TrimSpace(w.line)) == 0 {
			// Blank lines before the header: what a mailbox export
			// leaves between messages, not an empty header.
			first = true
			continue
		}
		if len(w.line) == 0 {
			break
		}
		if w.boundary() {
			w.pending = true
			break
		}
		if !hb.add(w.line) {
			w.unread()
			break
		}
	}
	return hb.h
}

// entity reads one entity (a header block and its body) and returns its
// header. It stops at the end of input or at a boundary line of an
// enclosing multipart (w.hit then tells which).
func (w *walker) entity(depth int, returned, top bool) header {
	w.hit = -1
	h := w.readHeader(top)
	if w.hit >= 0 {
		return h
	}
	ctype, params := mediaType(h.get("Content-Type"))
	if ctype == "" {
		ctype = "text/plain"
	}
	cte := strings.ToLower(strings.TrimSpace(h.get("Content-Transfer-Encoding")))
	encoded := cte == "base64" || cte == "quoted-printable"
	switch {
	case strings.HasPrefix(ctype, "multipart/") && params["boundary"] != "" && depth < maxDepth:
		if ctype == "multipart/report" && w.msg.report == "" && !returned {
			w.msg.report = strings.ToLower(params["report-type"])
			if w.msg.report == "" {
				w.msg.report = "?"
			}
		}
		w.multipart(params["boundary"], depth, returned)
	case (ctype == "message/rfc822" || ctype == "message/global" || ctype == "message/partial") && !encoded && depth < maxDepth:
		inner := w.entity(depth+1, true, false)
		w.msg.addReturned(inner, returned)
	case isHeadersType(ctype) && !encoded:
		inner := w.readHeader(false)
		w.msg.addReturned(inner, returned)
		if w.hit < 0 {
			w.leaf(ctype, params, cte, true)
		}
	default:
		w.leaf(ctype, params, cte, returned)
	}
	return h
}

// addReturned keeps the header of a returned message; nested tells it
// was inside another returned message.
func (m *message) addReturned(h header, nested bool) {
	m.returned = append(m.returned, h)
	m.nested = append(m.nested, nested)
}

// isHeadersType reports whether ctype is a headers-only returned message.
func isHeadersType(ctype string) bool {
	switch ctype {
	case "text/rfc822-headers", "text/rfc822-header", "message/rfc822-headers",
		"message/global-headers":
		return true
	}
	return false
}

// multipart reads the body of a multipart: the preamble, each part, the
// epilogue.
func (w *walker) multipart(boundary string, depth int, returned bool) {
	w.bounds = append(w.bounds, []byte("--"+boundary))
	me := len(w.bounds) - 1
	defer func() { w.bounds = w.bounds[:me] }()
	// The preamble: some servers write their explanation there.
	var pre []byte
	w.hit = -1
	for w.next() {
		if w.boundary() {
			break
		}
		if !returned && len(pre) < 4<<10 {
			pre = append(pre, w.line...)
			pre = append(pre, '\n')
		}
	}
	if len(bytes.TrimSpace(pre)) > 0 {
		w.addPart(&part{ctype: "text/plain", body: pre, returned: returned, preamble: true})
	}
	for w.hit == me && !w.hitClose {
		w.pending = false // our boundary line: consumed
		w.entity(depth+1, returned, false)
		if w.hit < 0 {
			return // end of input
		}
		if w.hit < me {
			w.pending = true // an enclosing boundary: not ours to consume
			return
		}
	}
	if w.hit < me {
		if w.hit >= 0 {
			w.pending = true
		}
		return
	}
	// The epilogue, up to an enclosing boundary.
	w.pending = false
	w.hit = -1
	for w.next() {
		if w.boundary() {
			if w.hit < me {
				w.pending = true
				return
			}
			w.hit = -1
		}
	}
}

// leaf reads a leaf body up to a boundary line or the end of input,
// keeping what the limits allow.
func (w *walker) leaf(ctype string, params map[string]string, cte string, returned bool) {
	// A returned message's parts are dropped, but for its delivery
	// status: a bounce that returns a bounce (a filter that wraps the
	// report it could not deliver) tells the failure only there.
	keep := (!returned || isDSNType(ctype)) && w.nparts < maxParts && w.kept < maxKeptBytes &&
		(strings.HasPrefix(ctype, "text/") || strings.HasPrefix(ctype, "message/") || ctype == "")
	limit := maxPartBytes
	if r := maxKeptBytes - w.kept; r < limit {
		limit = r
	}
	var raw []byte
	w.hit = -1
	for w.next() {
		if w.boundary() {
			break
		}
		if keep && len(raw)+len(w.line)+1 <= limit {
			raw = append(raw, w.line...)
			raw = append(raw, '\n')
		}
	}
	if w.hit >= 0 {
		w.pending = true
	}
	if !keep {
		return
	}
	w.kept += len(raw)
	p := &part{ctype: ctype, params: params, returned: returned}
	p.body = decodeBody(cte, raw)
	if cte == "base64" || cte == "quoted-printable" {
		p.body = normalizeEOL(p.body) // line ends the encoding hid from the walk
	}
	if strings.HasPrefix(ctype, "text/") {
		p.body = toUTF8(params["charset"], p.body)
	}
	if ctype == "message/rfc822" || ctype == "message/global" || isHeadersType(ctype) {
		// An encoded returned message: its headers are read from the
		// decoded body; the part is not kept as text.
		if blocks := fieldBlocks(p.body, maxHeaderBytes); len(blocks) > 0 {
			w.msg.addReturned(blocks[0], returned)
		}
		return
	}
	w.addPart(p)
}

// addPart keeps a part, up to maxParts.
func (w *walker) addPart(p *part) {
	if w.nparts >= maxParts {
		return
	}
	w.nparts++
	w.msg.parts = append(w.msg.parts, p)
}

// decodeBody undoes a Content-Transfer-Encoding, best effort: what does
// not decode is kept as it is.
func decodeBody(cte string, raw []byte) []byte {
	switch cte {
	case "base64":
		return decodeBase64(raw)
	case "quoted-printable":
		out, err := io.ReadAll(quotedprintable.NewReader(bytes.NewReader(raw)))
		if err != nil && len(out) == 0 {
			return raw
		}
		return out
	}
	return raw
}

// decodeBase64 decodes the base64 characters of raw, ignoring everything
// else (line ends, padding, stray bytes).
func decodeBase64(raw []byte) []byte {
	clean := make([]byte, 0, len(raw))
	for _, c := range raw {
		switch {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '+', c == '/':
			clean = append(clean, c)
		}
	}
	clean = clean[:len(clean)/4*4+min(len(clean)%4, 3)]
	if len(clean)%4 == 1 {
		clean = clean[:len(clean)-1]
	}
	out := make([]byte, base64.RawStdEncoding.DecodedLen(len(clean)))
	n, _ := base64.RawStdEncoding.Decode(out, clean)
	return out[:n]
}
