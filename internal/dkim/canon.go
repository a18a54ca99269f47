package dkim

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
// part of a line end). FuzzDKIMCanon (sign_test.go) checks the rest against
// go-msgauth.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash"
	"math/bits"
)

// errNoBody is the signer's error for a message without the empty
// line that ends its header; a built message always has one.
var errNoBody = errors.New("postroom: DKIM: the message has no end of header")

// headerField is one header field of a message: msg[start:end] is the whole
// field with its continuation lines and final line end.
type headerField struct{ start, end int }

// scanHeader appends the header fields of msg to fields[:0] and returns
// them with the offset of the body (after the empty line).
func scanHeader(fields []headerField, msg []byte) ([]headerField, int, error) {
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
			fields = append(fields, headerField{pos, next})
		}
		pos = next
	}
	return fields, 0, errNoBody
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
	value = trimFoldSpace(value)
	if isRelaxedValue(value) {
		return append(append(dst, value...), '\r', '\n')
	}
	space := false
	for _, c := range value {
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

// isRelaxedValue reports whether a header field value without white
// space at its ends is in relaxed form as it is: no HTAB, CR or LF, and
// no two SPs in a row. Most values are; they are then copied at once.
func isRelaxedValue(v []byte) bool {
	for i, c := range v {
		if c > ' ' {
			continue
		}
		if c == ' ' && v[i+1] == ' ' || c != ' ' && isFoldSpace(c) {
			return false // v[i+1]: v does not end with SP
		}
	}
	return true
}

// hashRelaxedBody writes the relaxed form of body (RFC 6376 §3.4.4) to
// h and returns buf, the scratch it used, for reuse: runs of WSP become
// one SP, WSP at line ends goes, and empty lines at the end go (a body of
// nothing but them hashes as empty); a last line without a line end gets
// CRLF. body[span.from:span.to] is taken to be canonical as it is
// (staticTail.span): whole CRLF lines, ending with one that is not empty,
// written without being looked at; a span with from >= to is none.
//
// It does not go line by line: it looks for the octets where the
// canonical form differs from the body (relaxedEdits), eight at a
// time, and writes what lies between them as it is.
func hashRelaxedBody(h hash.Hash, body, buf []byte, span bodySpan) []byte {
	end, final := relaxedEnd(body)
	if span.from >= span.to || span.to > end {
		span = bodySpan{end, end}
	}
	w := relaxedWriter{h: h, buf: buf[:0]}
	w.edit(body, 0, span.from)
	w.asIs(body[span.from:span.to])
	w.edit(body, span.to, end)
	if final {
		w.add("\r\n")
	}
	w.flush()
	return w.buf
}

// relaxedEnd returns the end of the last line of body that is not blank
// (empty or only WSP), with its line end if it has one, and whether it
// has none: what follows are the empty lines that relaxed
// canonicalization drops. It is 0 for a body of blank lines only. A CR
// is part of a line end only right before an LF.
func relaxedEnd(body []byte) (int, bool) {
	i := len(body)
back:
	for i > 0 {
		switch body[i-1] {
		case ' ', '\t', '\n':
		case '\r':
			if i == len(body) || body[i] != '\n' {
				break back
			}
		default:
			break back
		}
		i--
	}
	if i == 0 {
		return 0, false
	}
	if j := bytes.IndexByte(body[i:], '\n'); j >= 0 {
		return i + j + 1, false
	}
	return len(body), true
}

// relaxedWriter writes a canonical body to a hash: the parts taken as
// they are, short ones gathered in buf so that the hash gets few, long
// writes.
type relaxedWriter struct {
	h   hash.Hash
	buf []byte
}

// Past relaxedDirect octets a part taken as it is goes to the hash
// straight from the body; buf is written once it holds relaxedFlush.
// buf stays below the two together, whatever the body's size.
const (
	relaxedDirect = 4 << 10
	relaxedFlush  = 16 << 10
)

// asIs writes p as it is.
func (w *relaxedWriter) asIs(p []byte) {
	if len(p) >= relaxedDirect {
		w.flush()
		w.h.Write(p)
		return
	}
	w.buf = append(w.buf, p...)
	if len(w.buf) >= relaxedFlush {
		w.flush()
	}
}

// add writes s, a replacement (SP or CRLF).
func (w *relaxedWriter) add(s string) {
	w.buf = append(w.buf, s...)
}

// flush writes what buf holds.
func (w *relaxedWriter) flush() {
	if len(w.buf) > 0 {
		w.h.Write(w.buf)
		w.buf = w.buf[:0]
	}
}

// edit writes body[from:to] in relaxed form, to being relaxedEnd's end
// or the start of a line (so that a run of WSP reaching to is at the end
// of the body's last line). Only where relaxedEdits stops can the
// canonical form differ from the body: there a run of WSP becomes one SP
// or, at a line end, nothing, and a bare LF becomes CRLF.
func (w *relaxedWriter) edit(body []byte, from, to int) {
	b := body[:to] // b[from-1] is still the octet before from
	e := newRelaxedEdits(b)
	pos := from // b[pos:k] is taken as it is
	for k := from; ; {
		if k = e.next(k); k >= to {
			break
		}
		c := b[k]
		if c == '\n' { // a bare LF
			w.asIs(b[pos:k])
			w.add("\r\n")
			pos, k = k+1, k+1
			continue
		}
		// A run of WSP starts at k: relaxedEdits stops at the first
		// octet of any run of two or more, at a lone HTAB, and at a lone
		// SP before a control octet (an SP before a CR that does not
		// end the line stays).
		f := k + 1
		for f < to && (b[f] == ' ' || b[f] == '\t') {
			f++
		}
		switch {
		case f == to || b[f] == '\n' || b[f] == '\r' && f+1 < to && b[f+1] == '\n':
			w.asIs(b[pos:k]) // at the end of a line: dropped
			pos = f
		case f == k+1 && c == ' ':
			// One SP inside a line: as it is.
		default:
			w.asIs(b[pos:k])
			w.add(" ")
			pos = f
		}
		k = f
	}
	w.asIs(b[pos:to])
}

// SWAR constants: in every byte of a uint64, 0x01, 0x80, 0x7f, SP, LF,
// CR, and what added to a byte below 0x80 sets its top bit when it is
// above SP.
const (
	swarLo   = 0x0101010101010101
	swarHi   = 0x8080808080808080
	swarLow7 = 0x7f7f7f7f7f7f7f7f
	swarSP   = 0x2020202020202020
	swarLF   = 0x0a0a0a0a0a0a0a0a
	swarCR   = 0x0d0d0d0d0d0d0d0d
	swarGtSP = 0x5f5f5f5f5f5f5f5f // 0x80 - 0x21
)

// relaxedEdits finds the octets of b where its relaxed form may differ
// from it (isRelaxedEdit): an HTAB, an SP followed by a control octet,
// SP or HTAB, or by the end of b, and an LF after an octet that is not
// CR (or first in b). Past these, b is canonical as it is but for
// trailing empty lines. HTABs, rare, are found with bytes.IndexByte and
// the next one kept until passed; the rest eight offsets at a time.
type relaxedEdits struct {
	b   []byte
	tab int // the next HTAB at or after it, or len(b)
	// swar holds the SWAR constants the scan uses, so that they stay in
	// registers: the compiler makes a constant again at each use.
	swar [6]uint64
}

// newRelaxedEdits returns the finder of b's edits.
func newRelaxedEdits(b []byte) relaxedEdits {
	return relaxedEdits{b: b, tab: -1, swar: [...]uint64{swarLow7, swarSP, swarGtSP, swarHi, swarLF, swarCR}}
}

// next returns the offset of the first edit at or after k, or len(b).
func (e *relaxedEdits) next(k int) int {
	b := e.b
	if e.tab < k {
		e.tab = len(b)
		if i := bytes.IndexByte(b[k:], '\t'); i >= 0 {
			e.tab = k + i
		}
	}
	if k < len(b) && b[k] == '\n' && (k == 0 || b[k-1] != '\r') {
		return k // a bare LF (the loop flags one at the octet before it)
	}
	lim := e.tab
	low7, sp, gtSP, hi, lf, cr := e.swar[0], e.swar[1], e.swar[2], e.swar[3], e.swar[4], e.swar[5]
	for ; k+9 <= len(b) && k < lim; k += 8 {
		// v is eight octets, w the octet after each. Per byte, with its
		// top bit: (x^c)&0x7f + 0x7f has it unless x is c or has it
		// itself; x&0x7f + 0x5f has it unless x is at most SP or has it
		// itself. No top bit in none: an SP before an octet at most SP,
		// or an octet but CR before an LF.
		x := b[k : k+9 : k+9]
		v, w := binary.LittleEndian.Uint64(x[0:]), binary.LittleEndian.Uint64(x[1:])
		v7, w7 := v&low7, w&low7
		notSP := (v7 ^ sp) + low7 | v
		wAboveSP := (w7 + gtSP) | w
		notCR := (v7 ^ cr) + low7 | v
		wNotLF := (w7 ^ lf) + low7 | w
		none := (notSP | wAboveSP) & (wNotLF | ^notCR)
		if m := ^none & hi; m != 0 {
			i := k + bits.TrailingZeros64(m)/8
			if b[i] != ' ' || b[i+1] > ' ' {
				i++ // not an SP before an octet at most SP: a bare LF after it
			}
			return min(i, lim)
		}
	}
	for ; k < lim; k++ {
		if isRelaxedEdit(b, k) {
			return k
		}
	}
	return lim
}

// isRelaxedEdit reports whether relaxedEdits stops at b[k].
func isRelaxedEdit(b []byte, k int) bool {
	switch b[k] {
	case '\t':
		return true
	case ' ':
		return k+1 == len(b) || b[k+1] <= ' '
	case '\n':
		return k == 0 || b[k-1] != '\r'
	}
	return false
}

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

// isRelaxedLine reports whether a line that is not blank is canonical as
// it is: no HTAB, no two SPs in a row, no SP at its end.
func isRelaxedLine(line []byte) bool {
	return bytes.IndexByte(line, '\t') < 0 && line[len(line)-1] != ' ' && indexDoubleSpace(line) < 0
}
