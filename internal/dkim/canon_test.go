package dkim

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"
)

// recordingHash is a hash.Hash that keeps what is written to it.
type recordingHash struct{ bytes.Buffer }

func (h *recordingHash) Sum(b []byte) []byte { return append(b, h.Bytes()...) }
func (h *recordingHash) Size() int           { return 0 }
func (h *recordingHash) BlockSize() int      { return 1 }

// TestRelaxedBody checks the body canonicalisation on RFC 6376 §3.4.6's
// example and on the cases the one-pass scan treats apart: lines taken
// as they are, rewritten lines, empty lines kept between lines and
// dropped at the end, bare LF line ends, a last line without one.
func TestRelaxedBody(t *testing.T) {
	for _, tc := range []struct{ name, body, want string }{
		{"rfc 6376 example", " C \r\nD \t E\r\n\r\n\r\n", " C\r\nD E\r\n"},
		{"empty", "", ""},
		{"only empty lines", "\r\n\r\n", ""},
		{"only white space", " \t\r\n \r\n\t", ""},
		{"as is", "abc\r\ndef ghi\r\n", "abc\r\ndef ghi\r\n"},
		{"no final line end", "abc\r\ndef", "abc\r\ndef\r\n"},
		{"no final line end, white space", "abc  ", "abc\r\n"},
		{"empty lines inside", "a\r\n\r\n\r\nb\r\n", "a\r\n\r\n\r\nb\r\n"},
		{"blank lines inside", "a\r\n \r\n\t\r\nb\r\n", "a\r\n\r\n\r\nb\r\n"},
		{"empty lines before a rewritten line", "a\r\n\r\nb  c\r\n", "a\r\n\r\nb c\r\n"},
		{"leading empty lines", "\r\n\r\na\r\n", "\r\n\r\na\r\n"},
		{"leading white space", "  a\r\n\tb\r\n", " a\r\n b\r\n"},
		{"trailing white space", "a \r\nb\t\r\nc\r\n", "a\r\nb\r\nc\r\n"},
		{"inner runs", "a \t b  c\td\r\n", "a b c d\r\n"},
		{"bare LF", "a\nb \n\nc", "a\r\nb\r\n\r\nc\r\n"},
		{"as is around a rewrite", "x\r\ny  z\r\nw\r\nv\r\n", "x\r\ny z\r\nw\r\nv\r\n"},
		{"bare CR is an octet", "a\rb\r\n", "a\rb\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var h recordingHash
			hashRelaxedBody(&h, []byte(tc.body), nil, bodySpan{})
			if got := h.String(); got != tc.want {
				t.Errorf("relaxed(%q) = %q, want %q", tc.body, got, tc.want)
			}
		})
	}
}

// TestRelaxedField checks the header field canonicalisation on RFC 6376
// §3.4.6's example and on folded values and names.
func TestRelaxedField(t *testing.T) {
	for _, tc := range []struct{ field, want string }{
		{"A: X\r\n", "a:X\r\n"},
		{"B : Y\t\r\n\tZ  \r\n", "b:Y Z\r\n"},
		{"Subject:  Hello \t  world\r\n", "subject:Hello world\r\n"},
		{"To:\r\n ann@example.net,\r\n  bob@example.net\r\n", "to:ann@example.net, bob@example.net\r\n"},
		{"From\r\n : x\r\n", "from:x\r\n"},
		{"Empty:\r\n", "empty:\r\n"},
		{"No colon \r\n", "no colon:\r\n"},
	} {
		if got := string(appendRelaxedField(nil, []byte(tc.field))); got != tc.want {
			t.Errorf("relaxed(%q) = %q, want %q", tc.field, got, tc.want)
		}
	}
}

// FuzzIndexDoubleSpace holds indexDoubleSpace, eight offsets at a time,
// to bytes.Index.
func FuzzIndexDoubleSpace(f *testing.F) {
	for _, seed := range []string{"", " ", "  ", "a  b", "abcdefgh  ", "abcdefg  ", "abcdefghi ", " a b c d e f g h i j  k", "\xa0 \x80  ", "        "} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := indexDoubleSpace(b), bytes.Index(b, []byte("  ")); got != want {
			t.Fatalf("indexDoubleSpace(%q) = %d, bytes.Index %d", b, got, want)
		}
	})
}

// relaxedBodyReference is RFC 6376 §3.4.4 as written, line by line, with
// the signer's line ends (an LF ends a line, a CR right before it is part
// of the line end, any other CR is an octet): the oracle for
// hashRelaxedBody, which does not go line by line.
func relaxedBodyReference(body []byte) []byte {
	var lines [][]byte
	for len(body) > 0 {
		line := body
		body = nil
		if i := bytes.IndexByte(line, '\n'); i >= 0 {
			line, body = bytes.TrimSuffix(line[:i], []byte("\r")), line[i+1:]
		}
		var out []byte
		space := false
		for _, c := range line {
			if c == ' ' || c == '\t' {
				space = true
				continue
			}
			if space {
				out = append(out, ' ')
				space = false
			}
			out = append(out, c)
		}
		lines = append(lines, out) // WSP at the end of the line: gone
	}
	for len(lines) > 0 && len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	var out []byte
	for _, l := range lines {
		out = append(append(out, l...), '\r', '\n')
	}
	return out
}

// FuzzRelaxedBody holds hashRelaxedBody, without a static tail, to
// relaxedBodyReference on any body.
func FuzzRelaxedBody(f *testing.F) {
	for _, seed := range []string{
		"", "\r\n", " C \r\nD \t E\r\n\r\n\r\n", "a\nb \n\nc", "a\rb\r\n", "x \r", "x  \ry\r\n",
		"\n\n", "  \n", "a\r\r\n\r\n", "line with  runs \t and\ttabs\r\n=20 \r\n\r\n \t\r\n",
		"0123456789abcdef 0123456789abcdef  0123456789\tabcdef \r\n0123456789\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var h recordingHash
		buf := hashRelaxedBody(&h, body, nil, bodySpan{})
		want := relaxedBodyReference(body)
		if !bytes.Equal(h.Bytes(), want) {
			t.Fatalf("relaxed(%q) = %q, want %q", body, h.Bytes(), want)
		}
		if len(buf) != 0 {
			t.Fatalf("the scratch holds %d octets not written", len(buf))
		}
	})
}

// TestRelaxedBodyLarge holds hashRelaxedBody to relaxedBodyReference on
// bodies large enough that parts go to the hash straight from the body
// (relaxedDirect) and the scratch is written part way (relaxedFlush):
// long lines as they are, lines with runs to rewrite, bare LFs and CRs,
// empty and blank lines, in random order.
func TestRelaxedBodyLarge(t *testing.T) {
	rnd := rand.New(rand.NewPCG(4, 5))
	pieces := []string{"as is ", "two  spaces", "tab\there", " \t ", "\r\n", "\n", "\r", "end \r\n", "\r\n\r\n"}
	for n := range 20 {
		var body []byte
		for len(body) < 64<<10 {
			if rnd.IntN(8) == 0 {
				// A long stretch without an edit, past relaxedDirect.
				line := bytes.Repeat([]byte("QUJDREVGR0hJ"), rnd.IntN(1000))
				body = append(append(body, line...), "\r\n"...)
				continue
			}
			body = append(body, pieces[rnd.IntN(len(pieces))]...)
		}
		if n%2 == 0 {
			body = append(body, " \r\n\t\r\n\r\n"...)
		}
		var h recordingHash
		hashRelaxedBody(&h, body, nil, bodySpan{})
		if want := relaxedBodyReference(body); !bytes.Equal(h.Bytes(), want) {
			t.Fatalf("body %d: the canonical form differs from the reference's", n)
		}
	}
}

// FuzzRelaxedEdits holds relaxedEdits, which keeps the next HTAB and bare
// LF and looks at eight SPs at a time, to isRelaxedEdit octet by octet:
// from any offset, every edit in turn.
func FuzzRelaxedEdits(f *testing.F) {
	for _, seed := range []string{"", "\n", "a\nb", " ", "abcdefgh ", "abcdefghi\t", "abcdefgh\r\nij  kl", "\x8d\n\xa0 \x89\xa0\x8a", "        x\r\n", "a \tb\t \n\n \r\n x  \n"} {
		for k := range 3 {
			f.Add([]byte(seed), uint(k))
		}
	}
	f.Fuzz(func(t *testing.T, b []byte, k uint) {
		var want []int
		for i := int(k % uint(len(b)+1)); i < len(b); i++ {
			if isRelaxedEdit(b, i) {
				want = append(want, i)
			}
		}
		var got []int
		e := newRelaxedEdits(b)
		for i := int(k % uint(len(b)+1)); ; i++ {
			if i = e.next(i); i >= len(b) {
				break
			}
			got = append(got, i)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("edits of %q from %d: %v, want %v", b, k%uint(len(b)+1), got, want)
		}
	})
}

// relaxedFieldReference is RFC 6376 §3.4.2 as written, an octet at a
// time: the oracle for appendRelaxedField, which copies values already in
// relaxed form at once.
func relaxedFieldReference(field []byte) []byte {
	name, value := field, []byte(nil)
	if i := bytes.IndexByte(field, ':'); i >= 0 {
		name, value = field[:i], field[i+1:]
	}
	var out []byte
	for _, c := range bytes.Trim(name, " \t\r\n") {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		out = append(out, c)
	}
	out = append(out, ':')
	for _, w := range bytes.FieldsFunc(value, isFoldSpaceRune) {
		out = append(append(out, w...), ' ')
	}
	return append(bytes.TrimSuffix(out, []byte(" ")), '\r', '\n')
}

func isFoldSpaceRune(r rune) bool { return r < 0x80 && isFoldSpace(byte(r)) }

// FuzzRelaxedField holds appendRelaxedField to relaxedFieldReference.
func FuzzRelaxedField(f *testing.F) {
	for _, seed := range []string{"A: X\r\n", "B : Y\t\r\n\tZ  \r\n", "Subject: a b\r\n", "X: a\x01 b\r\n", "To:\r\n a,\r\n  b\r\n", "N:  \r\n", "no colon"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, field []byte) {
		if got, want := appendRelaxedField(nil, field), relaxedFieldReference(field); !bytes.Equal(got, want) {
			t.Fatalf("relaxed(%q) = %q, want %q", field, got, want)
		}
	})
}
