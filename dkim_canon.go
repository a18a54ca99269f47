package postroom

// DKIM's relaxed canonicalisation (RFC 6376 §3.4.2 and §3.4.4) of a built
// message, in one pass and without allocating: the header fields are found
// once, the signed ones rewritten into a reused buffer, and the body's
// lines hashed straight from the message unless they need rewriting; the
// lines of the static tail that need none (staticTail, found once per
// call) are hashed without being looked at.
//
// The input is a message postroom built: CRLF line ends, ASCII field names.
// A bare LF ends a line, as in go-msgauth and dkimpy; a bare CR is an
// ordinary octet (RFC 6376 gives it no meaning; go-msgauth treats it as
// part of a line end). FuzzDKIMCanon checks the rest against go-msgauth.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash"
	"math/bits"
)

// errDKIMNoBody is the signer's error for a message without the empty
// line that ends its header; a built message always has one.
var errDKIMNoBody = errors.New("postroom: DKIM: the message has no end of header")

// dkimField is one header field of a message: msg[start:end] is the whole
// field with its continuation lines and final line end.
type dkimField struct{ start, end int }

// scanHeader appends the header fields of msg to fields[:0] and returns
// them with the offset of the body (after the empty line).
func scanHeader(fields []dkimField, msg []byte) ([]dkimField, int, error) {
	fields = fields[:0]
	for pos := 0; pos < len(msg); {
		i := bytes.IndexByte(msg[pos:], '\n')
		if i < 0 {
			break
		}
		next := pos + i + 1
		line := msg[pos : pos+i]
		if len(line) > 0 && line[len(line)-1] == '\r' {
			line = line[:len(line)-1]
		}
		switch {
		case len(line) == 0:
			return fields, next, nil
		case (line[0] == ' ' || line[0] == '\t') && len(fields) > 0:
			fields[len(fields)-1].end = next
		default:
			fields = append(fields, dkimField{pos, next})
		}
		pos = next
	}
	return fields, 0, errDKIMNoBody
}

// isFoldSpace reports whether c is white space in a header field: WSP, or
// the CR and LF of a folded line.
func isFoldSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\n'
}

// trimFoldSpace returns b without white space (isFoldSpace) at its ends.
func trimFoldSpace(b []byte) []byte {
	for len(b) > 0 && isFoldSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isFoldSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

// fieldName returns the name of a header field: what comes before its
// colon (all of it when it has none), without white space.
func fieldName(field []byte) []byte {
	if i := bytes.IndexByte(field, ':'); i >= 0 {
		field = field[:i]
	}
	return trimFoldSpace(field)
}

// equalFoldASCII reports whether a and b are equal ignoring ASCII case.
func equalFoldASCII(a []byte, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range len(a) {
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

// appendRelaxedField appends field in relaxed form (RFC 6376 §3.4.2): the
// name in lower case, a colon, the value unfolded with every run of white
// space made one SP and none at its ends, and CRLF.
func appendRelaxedField(dst, field []byte) []byte {
	name, value := field, []byte(nil)
	if i := bytes.IndexByte(field, ':'); i >= 0 {
		name, value = field[:i], field[i+1:]
	}
	for _, c := range trimFoldSpace(name) {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	dst = append(dst, ':')
	space := false
	for _, c := range trimFoldSpace(value) {
		if isFoldSpace(c) {
			space = true
			continue
		}
		if space {
			dst = append(dst, ' ')
			space = false
		}
		dst = append(dst, c)
	}
	return append(dst, '\r', '\n')
}

// relaxedBody writes a body's relaxed canonical form (RFC 6376 §3.4.4) to
// a hash: runs of WSP become one SP, WSP at line ends goes, and empty
// lines at the end go (a body of nothing but them hashes as empty). Lines
// that are already canonical, which is nearly all of a built message
// (base64 and quoted-printable lines have no WSP runs), are written as
// they are, many at once; consecutive rewritten lines are written at
// once too.
type relaxedBody struct {
	h          hash.Hash
	body       []byte
	start, end int    // body[start:end] is taken as is and not yet written
	buf        []byte // rewritten lines not yet written
}

// hashRelaxedBody writes the relaxed form of body to h, rewriting lines in
// buf, and returns buf for reuse. body[span.from:span.to] is taken to be
// canonical as it is (staticTail.span): whole lines, ending with one that
// is not blank, written as they are without being looked at; a span
// with from >= to is none.
func hashRelaxedBody(h hash.Hash, body, buf []byte, span bodySpan) []byte {
	r := relaxedBody{h: h, body: body, buf: buf[:0]}
	if span.from >= span.to {
		span = bodySpan{len(body) + 1, len(body) + 1}
	}
	empty, plain := 0, true // empty lines held back; all of them a bare CRLF
	// tab and dsp are the offsets of the next HTAB and the next two SPs
	// at or after pos (or lim, the span's start or the end, for none
	// before it), searched again only once passed: a line that ends with
	// CRLF, not SP, and holds neither is canonical as it is.
	tab, dsp := -1, -1
	for pos := 0; pos < len(body); {
		if pos == span.from {
			// Like the start of a line that is not blank: the span
			// ends with one.
			r.holdEmpty(pos, empty, plain)
			empty, plain = 0, true
			r.asIs(span.from, span.to)
			pos = span.to
			continue
		}
		end, next, crlf := len(body), len(body), false
		if i := bytes.IndexByte(body[pos:], '\n'); i >= 0 {
			end, next = pos+i, pos+i+1
			if end > pos && body[end-1] == '\r' {
				end--
				crlf = true
			}
		}
		line := body[pos:end]
		if isBlankLine(line) {
			empty++
			plain = plain && crlf && len(line) == 0
			pos = next
			continue
		}
		r.holdEmpty(pos, empty, plain)
		empty, plain = 0, true
		lim := len(body)
		if pos < span.from {
			lim = min(lim, span.from)
		}
		if tab < pos {
			tab = nextIndex(body[:lim], pos, bytes.IndexByte(body[pos:lim], '\t'))
		}
		if dsp < pos {
			dsp = nextIndex(body[:lim], pos, indexDoubleSpace(body[pos:lim]))
		}
		// line is not blank, so not empty: line[len(line)-1] exists.
		if crlf && tab >= end && dsp >= end && line[len(line)-1] != ' ' {
			r.asIs(pos, next)
		} else {
			r.flushAsIs()
			if tab >= end {
				// No HTAB: the first run of SPs to shorten is at dsp.
				r.buf = append(appendRelaxedSpaces(r.buf, line, min(dsp, end)-pos), '\r', '\n')
			} else {
				r.buf = append(appendRelaxedWSP(r.buf, line), '\r', '\n')
			}
		}
		pos = next
	}
	r.flushAsIs()
	r.flushBuf()
	return r.buf
}

// holdEmpty adds the empty lines held back before the line at pos: as
// they are when plain (each a bare CRLF), else each as CRLF.
func (r *relaxedBody) holdEmpty(pos, empty int, plain bool) {
	switch {
	case empty == 0:
	case plain:
		r.asIs(pos-2*empty, pos)
	default:
		r.flushAsIs()
		for range empty {
			r.buf = append(r.buf, '\r', '\n')
		}
	}
}

// asIs adds body[from:to] to what is written as it is, after the
// rewritten lines held.
func (r *relaxedBody) asIs(from, to int) {
	r.flushBuf()
	if from != r.end {
		r.flushAsIs()
		r.start = from
	}
	r.end = to
}

// flushAsIs writes what is held to be written as it is.
func (r *relaxedBody) flushAsIs() {
	if r.end > r.start {
		r.h.Write(r.body[r.start:r.end])
	}
	r.start, r.end = 0, 0
}

// flushBuf writes the rewritten lines held.
func (r *relaxedBody) flushBuf() {
	if len(r.buf) > 0 {
		r.h.Write(r.buf)
		r.buf = r.buf[:0]
	}
}

// nextIndex returns from+i, the offset in body of what was found at i in
// body[from:], or len(body) when i < 0 (not found).
func nextIndex(body []byte, from, i int) int {
	if i < 0 {
		return len(body)
	}
	return from + i
}

// SWAR constants: a byte of 0x01, of 0x80 and of SP in every byte of a
// uint64.
const (
	swarLo = 0x0101010101010101
	swarHi = 0x8080808080808080
	swarSP = 0x2020202020202020
)

// indexDoubleSpace returns the offset of the first two SPs in a row in b,
// or -1. It looks at eight offsets at once: bytes.Index stops at every
// single SP, which text has every few octets.
func indexDoubleSpace(b []byte) int {
	if len(b) < 9 {
		for i := 0; i+1 < len(b); i++ {
			if b[i] == ' ' && b[i+1] == ' ' {
				return i
			}
		}
		return -1
	}
	for i := 0; ; i += 8 {
		// The last window ends at the end of b, overlapping the one
		// before, whose offsets hold no two SPs.
		i = min(i, len(b)-9)
		// v has a zero byte where b[i+k] and b[i+k+1] are both SP; the
		// lowest byte flagged in t is the first zero byte of v.
		v := (binary.LittleEndian.Uint64(b[i:]) ^ swarSP) | (binary.LittleEndian.Uint64(b[i+1:]) ^ swarSP)
		if t := (v - swarLo) &^ v & swarHi; t != 0 {
			return i + bits.TrailingZeros64(t)/8
		}
		if i == len(b)-9 {
			return -1
		}
	}
}

// isBlankLine reports whether line (without its line end) is empty or
// only WSP: an empty line once canonical.
func isBlankLine(line []byte) bool {
	for _, c := range line {
		if c != ' ' && c != '\t' {
			return false
		}
	}
	return true
}

// isRelaxedLine reports whether a line that is not blank is canonical as
// it is: no HTAB, no two SPs in a row, no SP at its end.
func isRelaxedLine(line []byte) bool {
	return bytes.IndexByte(line, '\t') < 0 && line[len(line)-1] != ' ' && indexDoubleSpace(line) < 0
}

// appendRelaxedSpaces appends a line without HTAB with each run of SPs
// made one SP and none at its end, copied in pieces between the runs;
// its first two SPs in a row are at i (len(line) for none).
func appendRelaxedSpaces(dst, line []byte, i int) []byte {
	for {
		if i >= len(line) {
			if n := len(line); n > 0 && line[n-1] == ' ' {
				line = line[:n-1]
			}
			return append(dst, line...)
		}
		j := i + 2
		for j < len(line) && line[j] == ' ' {
			j++
		}
		if j == len(line) {
			return append(dst, line[:i]...)
		}
		dst = append(dst, line[:i+1]...)
		line = line[j:]
		if i = indexDoubleSpace(line); i < 0 {
			i = len(line)
		}
	}
}

// appendRelaxedWSP appends line with each run of WSP made one SP and none
// at its end, an octet at a time.
func appendRelaxedWSP(dst, line []byte) []byte {
	space := false
	for _, c := range line {
		if c == ' ' || c == '\t' {
			space = true
			continue
		}
		if space {
			dst = append(dst, ' ')
			space = false
		}
		dst = append(dst, c)
	}
	return dst
}

// bodySpan is a part of a message body, body[from:to].
type bodySpan struct{ from, to int }

// staticTail is what every message of a call ends with, the skeleton's
// static tail (mimemsg.Skeleton.StaticTail), and the part of it that the
// relaxed body canonicalization leaves as it is: bytes[from:to], whole
// CRLF lines from the first line start in the tail (its first octets end
// the line a per-recipient part began), each canonical (isRelaxedLine,
// or empty), the last not empty. It is found once per call; from == to
// when there is none.
type staticTail struct {
	bytes    []byte
	from, to int
}

// newStaticTail finds the canonical part of tail.
func newStaticTail(tail []byte) staticTail {
	t := staticTail{bytes: tail}
	i := bytes.IndexByte(tail, '\n')
	if i < 0 {
		return t
	}
	t.from, t.to = i+1, i+1
	for pos := t.from; pos < len(tail); {
		j := bytes.IndexByte(tail[pos:], '\n')
		if j < 1 || tail[pos+j-1] != '\r' {
			break // no line end, or a bare LF
		}
		line := tail[pos : pos+j-1]
		if bytes.IndexByte(line, '\r') >= 0 {
			break // a bare CR: left to the full canonicalization
		}
		pos += j + 1
		if len(line) > 0 {
			if !isRelaxedLine(line) {
				break
			}
			t.to = pos
		}
	}
	if t.to == t.from {
		t.from, t.to = 0, 0
	}
	return t
}

// tailCheck is how many octets at each end of the tail span compares with
// the message: a guard against a message the tail was not made for,
// which then gets the full canonicalization; the messages the call's
// skeleton builds all end with the whole tail.
const tailCheck = 64

// span returns the canonical part of the tail in msg, whose body starts
// at offset body, as offsets into the body; none (from == to) when msg
// does not end as the tail does.
func (t *staticTail) span(msg []byte, body int) bodySpan {
	start := len(msg) - len(t.bytes)
	if t.from == t.to || start < body {
		return bodySpan{}
	}
	end := msg[start:]
	if n := min(len(end), t.from+tailCheck); !bytes.Equal(end[:n], t.bytes[:n]) {
		return bodySpan{}
	}
	if n := max(len(end)-tailCheck, 0); !bytes.Equal(end[n:], t.bytes[n:]) {
		return bodySpan{}
	}
	return bodySpan{start - body + t.from, start - body + t.to}
}
