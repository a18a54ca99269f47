package transport

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// referenceCRLF makes every line end CRLF the slow, obvious way.
func referenceCRLF(b []byte) []byte {
	b = bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n"))
	b = bytes.ReplaceAll(b, []byte("\r"), []byte("\n"))
	return bytes.ReplaceAll(b, []byte("\n"), []byte("\r\n"))
}

// checkCRLF fails when b holds a bare CR or LF.
func checkCRLF(t *testing.T, what string, b []byte) {
	t.Helper()
	for i, c := range b {
		if c == '\r' && (i+1 == len(b) || b[i+1] != '\n') || c == '\n' && (i == 0 || b[i-1] != '\r') {
			t.Fatalf("%s: bare CR or LF at %d: %q", what, i, b)
		}
	}
}

// FuzzWire sends any message body through the DATA dot-stuffing writer
// and the BDAT chunker and reads back what the wire holds: CRLF line ends
// only, no end of data before the end, and un-stuffing (or the chunk)
// gives back the message with its line ends made CRLF. newMessage refuses
// exactly the messages with a line over 998 octets.
//
// Run: go test -run '^$' -fuzz FuzzWire -fuzztime 60s ./transport
func FuzzWire(f *testing.F) {
	for _, s := range []string{
		"", ".", "\r\n.\r\n", "a\r\n.b\r\n.\r\n..\r\n", ".x\r\n", "a\r\nb", "a\nb\n.c\n",
		"a\rb\r\n", "a\r\r\nb\r\n", "\na\r\n", "a\r\nb\r", "x\r\n.", "\r\n.\n", ".\r.\n.",
		strings.Repeat("x", 998) + "\r\n" + strings.Repeat("y", 999), "caf\xc3\xa9\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		in := bytes.Clone(data)
		norm, longest := crlfOnly(data)
		if !bytes.Equal(data, in) {
			t.Fatal("crlfOnly changed its input")
		}
		ref := referenceCRLF(data)
		if !bytes.Equal(norm, ref) {
			t.Fatalf("crlfOnly(%q) = %q, want %q", data, norm, ref)
		}
		wantLongest := 0
		for _, l := range bytes.Split(ref, []byte("\r\n")) {
			wantLongest = max(wantLongest, len(l))
		}
		if longest != wantLongest {
			t.Fatalf("longest line %d, want %d", longest, wantLongest)
		}
		m, err := newMessage(data)
		if (err != nil) != (wantLongest > maxLine) {
			t.Fatalf("newMessage: %v with the longest line %d", err, wantLongest)
		}
		if err == nil && m.eightBit != bytes.ContainsFunc(data, func(r rune) bool { return r >= 0x80 }) {
			t.Fatalf("eightBit %v for %q", m.eightBit, data)
		}
		want := ref
		if len(want) > 0 && !bytes.HasSuffix(want, crlf) {
			want = append(bytes.Clone(want), crlf...)
		}

		var buf bytes.Buffer
		w := bufio.NewWriter(&buf)
		if err := writeData(w, norm); err != nil {
			t.Fatal(err)
		}
		w.Flush()
		wire := buf.Bytes()
		checkCRLF(t, "DATA", wire)
		end := []byte("\r\n.\r\n")
		switch {
		case len(want) == 0:
			if string(wire) != ".\r\n" {
				t.Fatalf("DATA of an empty message: %q", wire)
			}
		case bytes.Index(wire, end) != len(wire)-len(end):
			t.Fatalf("DATA: end of data at %d of %d: %q", bytes.Index(wire, end), len(wire), wire)
		}
		var unstuffed []byte
		body := wire[:len(wire)-len(".\r\n")]
		for len(body) > 0 {
			i := bytes.Index(body, crlf) + len(crlf)
			line := body[:i]
			if string(line) == ".\r\n" {
				t.Fatalf("DATA: a lone dot line before the end: %q", wire)
			}
			unstuffed = append(unstuffed, bytes.TrimPrefix(line, []byte("."))...)
			body = body[i:]
		}
		if !bytes.Equal(unstuffed, want) {
			t.Fatalf("DATA un-stuffed: %q, want %q", unstuffed, want)
		}

		buf.Reset()
		writeBDAT(w, nil, norm)
		w.Flush()
		wire = buf.Bytes()
		header, chunk, ok := bytes.Cut(wire, crlf)
		if !ok || string(header) != fmt.Sprintf("BDAT %d LAST", len(chunk)) {
			t.Fatalf("BDAT: header %q for a chunk of %d bytes", header, len(chunk))
		}
		checkCRLF(t, "BDAT", chunk)
		if !bytes.Equal(chunk, want) {
			t.Fatalf("BDAT chunk: %q, want %q", chunk, want)
		}
	})
}
