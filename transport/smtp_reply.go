package transport

import (
	"bufio"
	"bytes"
	"net/textproto"
	"strings"
)

// maxReplyLine caps how much of one reply line readReply keeps; the rest
// of a longer line is read and dropped.
const maxReplyLine = 4096

// readReply reads one reply (RFC 5321 §4.2), multi-line or not, from r. It
// keeps the text only when the code is not 2xx, the only case anyone reads
// it: a positive reply, the common case, allocates nothing.
//
// A reply that is not "ddd[ text]" or "ddd-text" lines with the same code
// is a textproto.ProtocolError, as net/textproto's ReadResponse says; a bare
// "250" is accepted (RFC 5321 §4.2: the text is optional).
func readReply(r *bufio.Reader) (code int, msg string, err error) {
	var text strings.Builder
	for first := true; ; first = false {
		line, err := readLine(r)
		if err != nil {
			return 0, "", err
		}
		c, more, ok := parseReplyLine(line)
		if !ok || !first && c != code {
			return 0, "", textproto.ProtocolError("malformed reply: " + oneLine(string(line)))
		}
		code = c
		if code/100 != 2 && len(line) > 4 {
			if text.Len() > 0 {
				text.WriteByte('\n')
			}
			text.Write(line[4:])
		}
		if !more {
			return code, text.String(), nil
		}
	}
}

// readLine returns the next line without its line end. The slice is r's
// own, valid until the next read, unless the line was longer than r's
// buffer.
func readLine(r *bufio.Reader) ([]byte, error) {
	line, err := r.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		long := bytes.Clone(line)
		for err == bufio.ErrBufferFull {
			line, err = r.ReadSlice('\n')
			if len(long) < maxReplyLine {
				long = append(long, line...)
			}
		}
		line = long
	}
	if err != nil {
		return nil, err
	}
	line = bytes.TrimSuffix(line, crlf[1:])
	return bytes.TrimSuffix(line, crlf[:1]), nil
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
