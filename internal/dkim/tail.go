package dkim

// The static tail: what every message of a call ends with (the skeleton's
// images and attachments in base64 lines, its closing boundaries), and the
// part of it relaxed body canonicalization leaves as it is, found once per
// call so that each message's hash takes those lines without scanning them.

import "bytes"

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
