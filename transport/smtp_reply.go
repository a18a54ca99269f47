package transport

import (
	"bufio"
	"errors"
	"fmt"
	"net/textproto"
	"strings"

	"github.com/postroom/postroom/internal/replytext"
)

// The bounds of one server reply. RFC 5321 §4.5.3.1.5 allows 512 octets a
// reply line; real servers stay far below these, and a reply beyond them
// fails the connection with ErrReplyTooLong instead of growing the
// client's memory for as long as a hostile or broken server sends.
const (
	// maxReplyLine is the longest reply line, its CRLF included.
	maxReplyLine = 4 << 10
	// maxReplyLines is the most lines in one multi-line reply (an EHLO
	// reply lists a dozen).
	maxReplyLines = 128
	// maxReplyBytes is the most bytes in one reply.
	maxReplyBytes = 64 << 10
)

// ErrReplyTooLong: a server reply had a line longer than 4 KiB, more than
// 128 lines or more than 64 KiB in all. The connection is closed; the
// error is temporary, as for any broken connection, unless it came after
// the end of data, where the outcome is Uncertain.
var ErrReplyTooLong = errors.New("transport: server reply too long")

// ErrUnexpectedReply: the server sent a reply no command asked for, such as
// a second reply after the end of data. Replies can no longer be matched to
// commands, so the connection is closed: a message whose end-of-data reply
// came with an unsolicited one is Uncertain, and a pooled connection found
// holding one before a transaction is redialed.
var ErrUnexpectedReply = errors.New("transport: unexpected server reply")

// newReader returns the reader replies are read with: its buffer holds
// the longest allowed line, so a reply line never allocates.
func newReader(r interface{ Read([]byte) (int, error) }) *bufio.Reader {
	return bufio.NewReaderSize(r, maxReplyLine)
}

// readReply reads one reply (RFC 5321 §4.2), multi-line or not, from r. It
// keeps the text only when the code is not 2xx, the only case anyone reads
// it: a positive reply, the common case, allocates nothing.
//
// A reply that is not "ddd[ text]" or "ddd-text" lines with the same code
// is a textproto.ProtocolError, as net/textproto's ReadResponse says; a bare
// "250" is accepted (RFC 5321 §4.2: the text is optional). A reply over the
// bounds above is ErrReplyTooLong.
func readReply(r *bufio.Reader) (code int, msg string, err error) {
	return readReplyLines(r, nil)
}

// readReplyLines is readReply that also hands every line's text (after
// "ddd-" or "ddd ") to each, when not nil, as EHLO's keywords need. The
// slice is valid only during the call.
func readReplyLines(r *bufio.Reader, each func(text []byte)) (code int, msg string, err error) {
	var text strings.Builder
	total := 0
	for n := 1; ; n++ {
		line, err := r.ReadSlice('\n')
		total += len(line)
		switch {
		case err == bufio.ErrBufferFull:
			return 0, "", fmt.Errorf("%w: a line over %d bytes", ErrReplyTooLong, maxReplyLine)
		case err != nil:
			return 0, "", err
		case n > maxReplyLines:
			return 0, "", fmt.Errorf("%w: over %d lines", ErrReplyTooLong, maxReplyLines)
		case total > maxReplyBytes:
			return 0, "", fmt.Errorf("%w: over %d bytes", ErrReplyTooLong, maxReplyBytes)
		}
		line = line[:len(line)-1]
		if len(line) > 0 && line[len(line)-1] == '\r' {
			line = line[:len(line)-1]
		}
		c, more, ok := parseReplyLine(line)
		if !ok || n > 1 && c != code {
			return 0, "", textproto.ProtocolError("malformed reply: " + replytext.Line(string(line)))
		}
		code = c
		if len(line) > 4 {
			if each != nil {
				each(line[4:])
			}
			if code/100 != 2 {
				if text.Len() > 0 {
					text.WriteByte('\n')
				}
				text.Write(line[4:])
			}
		}
		if !more {
			return code, text.String(), nil
		}
	}
}

// parseReplyLine splits "ddd text" (the last line), "ddd-text" (more
// follow) or "ddd".
func parseReplyLine(line []byte) (code int, more, ok bool) {
	if len(line) < 3 || line[0] < '1' || line[0] > '9' {
		return 0, false, false
	}
	for _, d := range line[:3] {
		if d < '0' || d > '9' {
			return 0, false, false
		}
		code = code*10 + int(d-'0')
	}
	if len(line) == 3 {
		return code, false, true
	}
	switch line[3] {
	case ' ':
		return code, false, true
	case '-':
		return code, true, true
	}
	return 0, false, false
}
