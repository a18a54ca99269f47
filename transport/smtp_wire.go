package transport

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/postroom/postroom/delivery"
)

// message is an envelope's data as it goes on the wire, checked and
// scanned once per Send rather than once per attempt.
type message struct {
	data     []byte // CRLF line ends only: the envelope's, or a normalized copy
	eightBit bool   // a byte over 127: needs 8BITMIME
}

// maxLine is the longest text line SMTP carries, without its CRLF (RFC
// 5321 §4.5.3.1.6; 8BITMIME keeps it, RFC 6152 §3).
const maxLine = 998

// newMessage prepares data for the wire, or refuses it with a permanent
// DeliveryError when a line is longer than maxLine, before anything is
// sent.
func newMessage(data []byte) (message, error) {
	data, longest := crlfOnly(data)
	if longest > maxLine {
		return message{}, &delivery.DeliveryError{Kind: delivery.DeliveryPermanent, Enhanced: "5.6.0",
			Text: fmt.Sprintf("message has a line of %d octets; SMTP allows %d", longest, maxLine)}
	}
	return message{data: data, eightBit: has8Bit(data)}, nil
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// has8Bit reports whether b has a byte over 127, 32 bytes at a time.
func has8Bit(b []byte) bool {
	const hi = 0x8080808080808080
	for len(b) >= 32 {
		if (binary.LittleEndian.Uint64(b)|binary.LittleEndian.Uint64(b[8:])|
			binary.LittleEndian.Uint64(b[16:])|binary.LittleEndian.Uint64(b[24:]))&hi != 0 {
			return true
		}
		b = b[32:]
	}
	for len(b) >= 8 {
		if binary.LittleEndian.Uint64(b)&hi != 0 {
			return true
		}
		b = b[8:]
	}
	for _, c := range b {
		if c >= 0x80 {
			return true
		}
	}
	return false
}

var (
	crlf    = []byte("\r\n")
	lfDot   = []byte("\n.")
	dotCRLF = []byte(".\r\n")
)

// writeData writes data, whose line ends are CRLF only (see crlfOnly), as
// the text of DATA: dot-stuffed (RFC 5321 §4.5.2), ending in CRLF and the
// final ".\r\n". It goes out in large runs between the lines that start
// with a dot, found with bytes.Index.
func writeData(w *bufio.Writer, data []byte) error {
	if len(data) > 0 && data[0] == '.' {
		w.WriteByte('.')
	}
	for len(data) > 0 {
		i := bytes.Index(data, lfDot)
		if i < 0 {
			w.Write(data)
			break
		}
		w.Write(data[:i+1])
		w.WriteByte('.')
		data = data[i+1:]
	}
	if len(data) > 0 && !bytes.HasSuffix(data, crlf) {
		w.Write(crlf)
	}
	_, err := w.Write(dotCRLF)
	return err
}

// writeBDAT writes data, whose line ends are CRLF only, as one BDAT LAST
// chunk (RFC 3030), with a CRLF after a last line without one, as DATA
// adds, so that both send the same message. num is scratch space.
func writeBDAT(w *bufio.Writer, num, data []byte) {
	tail := len(data) > 0 && !bytes.HasSuffix(data, crlf)
	n := len(data)
	if tail {
		n += len(crlf)
	}
	w.WriteString("BDAT ")
	w.Write(strconv.AppendInt(num, int64(n), 10))
	w.WriteString(" LAST\r\n")
	w.Write(data)
	if tail {
		w.Write(crlf)
	}
}

// crlfOnly returns data when its line ends are all CRLF, as a
// delivery.Envelope's are, or else a normalized copy; and the length of
// its longest line, without the CRLF.
func crlfOnly(data []byte) ([]byte, int) {
	// Every LF follows a CR, and there are as many CRs as LFs: then every
	// CR is followed by an LF. IndexByte and Count are vectorized; a
	// two-byte bytes.Count is not, and took most of the time.
	lines, longest := 0, 0
	for rest, off := data, 0; ; lines++ {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			longest = max(longest, len(rest))
			break
		}
		if off+i == 0 || data[off+i-1] != '\r' {
			return crlfOnly(normalizeCRLF(data))
		}
		longest = max(longest, i-1)
		rest, off = rest[i+1:], off+i+1
	}
	if bytes.Count(data, crlf[:1]) != lines {
		return crlfOnly(normalizeCRLF(data))
	}
	return data, longest
}

// normalizeCRLF returns a copy of b with every bare CR or LF made CRLF.
func normalizeCRLF(b []byte) []byte {
	out := make([]byte, 0, len(b)+len(b)/32)
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '\r':
			out = append(out, '\r', '\n')
			if i+1 < len(b) && b[i+1] == '\n' {
				i++
			}
		case '\n':
			out = append(out, '\r', '\n')
		default:
			out = append(out, b[i])
		}
	}
	return out
}
