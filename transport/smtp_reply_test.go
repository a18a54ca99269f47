package transport

import (
	"bufio"
	"errors"
	"io"
	"net/textproto"
	"strings"
	"testing"
)

func TestReadReply(t *testing.T) {
	long := strings.Repeat("x", maxReplyLine-6) // "554 " and CRLF make it the longest line
	manyLines := strings.Repeat("250-x\r\n", maxReplyLines) + "250 x\r\n"
	lines := func(n int) string { // n lines of about 4000 bytes, the last with "554 "
		return strings.Repeat("554-"+long[:4000]+"\r\n", n-1) + "554 " + long[:4000] + "\r\n"
	}
	tests := []struct {
		name     string
		in       string
		code     int
		msg      string
		protocol bool // a textproto.ProtocolError
		eof      bool
		tooLong  bool // ErrReplyTooLong
	}{
		{name: "one line", in: "250 2.0.0 ok\r\n", code: 250},
		{name: "multi-line 2xx keeps no text", in: "250-a\r\n250-b\r\n250 c\r\n", code: 250},
		{name: "bare code", in: "250\r\n", code: 250},
		{name: "bare LF", in: "354 go ahead\n", code: 354, msg: "go ahead"},
		{name: "4xx text", in: "451 4.3.0 try later\r\n", code: 451, msg: "4.3.0 try later"},
		{name: "multi-line 5xx text", in: "550-5.1.1 no such\r\n550 5.1.1 user\r\n", code: 550, msg: "5.1.1 no such\n5.1.1 user"},
		{name: "longest line", in: "554 " + long + "\r\n", code: 554, msg: long},
		{name: "line too long", in: "554 " + long + "x\r\n", tooLong: true},
		{name: "most lines", in: manyLines[len("250-x\r\n"):], code: 250},
		{name: "too many lines", in: manyLines, tooLong: true},
		{name: "most bytes", in: lines(16), code: 554, msg: strings.TrimSuffix(strings.Repeat(long[:4000]+"\n", 16), "\n")},
		{name: "too many bytes", in: lines(17), tooLong: true},
		{name: "code out of range is a reply", in: "650 what\r\n", code: 650, msg: "what"},
		{name: "not a code", in: "2x0 ok\r\n", protocol: true},
		{name: "no separator", in: "250ok\r\n", protocol: true},
		{name: "leading zero", in: "050 ok\r\n", protocol: true},
		{name: "text", in: "hello there\r\n", protocol: true},
		{name: "codes differ", in: "250-a\r\n251 b\r\n", protocol: true},
		{name: "cut mid-line", in: "250 o", eof: true},
		{name: "cut mid-reply", in: "250-a\r\n", eof: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newReader(strings.NewReader(tt.in))
			code, msg, err := readReply(r)
			var pe textproto.ProtocolError
			switch {
			case tt.protocol:
				if !errors.As(err, &pe) {
					t.Fatalf("readReply: %d %q %v, want a ProtocolError", code, msg, err)
				}
			case tt.tooLong:
				if !errors.Is(err, ErrReplyTooLong) {
					t.Fatalf("readReply: %d %q %v, want ErrReplyTooLong", code, msg, err)
				}
			case tt.eof:
				if !errors.Is(err, io.EOF) {
					t.Fatalf("readReply: %d %q %v, want EOF", code, msg, err)
				}
			case err != nil || code != tt.code || msg != tt.msg:
				t.Fatalf("readReply: %d %q %v, want %d %q", code, msg, err, tt.code, tt.msg)
			}
		})
	}
}

// TestReadReplyInSequence reads replies one after another from one
// reader, as a pipelined transaction does.
func TestReadReplyInSequence(t *testing.T) {
	r := bufio.NewReader(strings.NewReader("250 ok\r\n250-a\r\n250 b\r\n550 5.1.1 no\r\n354 go\r\n"))
	for _, want := range []int{250, 250, 550, 354} {
		code, _, err := readReply(r)
		if err != nil || code != want {
			t.Fatalf("readReply: %d, %v; want %d", code, err, want)
		}
	}
	if _, _, err := readReply(r); !errors.Is(err, io.EOF) {
		t.Fatalf("readReply at the end: %v, want EOF", err)
	}
}
