package qp

import (
	"bytes"
	"encoding/json"
	"io"
	"mime/quotedprintable"
	"strings"
	"testing"

	"github.com/postroom/postroom/internal/testkit/workload"
)

// canonical is src with every lone LF turned into CRLF: what decoding
// Append's output gives back.
func canonical(src []byte) []byte {
	var out []byte
	for i, c := range src {
		if c == '\n' && (i == 0 || src[i-1] != '\r') {
			out = append(out, '\r')
		}
		out = append(out, c)
	}
	return out
}

// checkEncoded verifies Append's output for src: only printable ASCII, tab and
// CRLF, lines of at most 76 characters (75 for the last one), and a round
// trip through mime/quotedprintable's Reader back to canonical(src).
func checkEncoded(t *testing.T, src, enc []byte) {
	t.Helper()
	if n := Len(src); n != len(enc) {
		t.Errorf("Len = %d, want len(Append) = %d", n, len(enc))
	}
	lines := bytes.Split(enc, []byte("\r\n"))
	for n, l := range lines {
		limit := 76
		if n == len(lines)-1 {
			limit = 75
		}
		if len(l) > limit {
			t.Fatalf("line %d is %d characters (limit %d): %q", n, len(l), limit, l)
		}
		for _, c := range l {
			if (c < ' ' || c > '~') && c != '\t' {
				t.Fatalf("line %d holds byte %#x, neither printable ASCII nor tab: %q", n, c, l)
			}
		}
		if len(l) > 0 && n < len(lines)-1 {
			if last := l[len(l)-1]; last == ' ' || last == '\t' {
				t.Fatalf("line %d ends with white space: %q", n, l)
			}
		}
	}
	if len(enc) > MaxLen(len(src)) {
		t.Fatalf("output is %d bytes, more than MaxLen(%d) = %d", len(enc), len(src), MaxLen(len(src)))
	}
	got, err := io.ReadAll(quotedprintable.NewReader(bytes.NewReader(enc)))
	if err != nil {
		t.Fatalf("decoding %q: %v", enc, err)
	}
	if want := canonical(src); !bytes.Equal(got, want) {
		t.Fatalf("round trip:\n got %q\nwant %q\n enc %q", got, want, enc)
	}
}

func TestAppend(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"empty", "", ""},
		{"plain", "Hello, world!", "Hello, world!"},
		{"equals", "a=b", "a=3Db"},
		{"utf8", "Zoë", "Zo=C3=AB"},
		{"lf", "a\nb\n", "a\r\nb\r\n"},
		{"crlf", "a\r\nb\r\n", "a\r\nb\r\n"},
		{"lone cr", "a\rb", "a=0Db"},
		{"cr at end", "a\r", "a=0D"},
		{"cr cr lf", "a\r\r\nb", "a=0D\r\nb"},
		{"trailing space before lf", "a \nb", "a=20\r\nb"},
		{"trailing tab before crlf", "a\t\r\nb", "a=09\r\nb"},
		{"trailing spaces at end", "a  ", "a =20"},
		{"inner space and tab", "a b\tc", "a b\tc"},
		{"space before lone cr", "a \rb", "a =0Db"},
		{"control", "a\x00\x7fb", "a=00=7Fb"},
		{"long line", strings.Repeat("x", 80), strings.Repeat("x", 75) + "=\r\n" + "xxxxx"},
		{"exactly 75", strings.Repeat("x", 75) + "\n", strings.Repeat("x", 75) + "\r\n"},
		{"triplet not split", strings.Repeat("x", 73) + "=", strings.Repeat("x", 73) + "=\r\n=3D"},
		{"triplet fits", strings.Repeat("x", 72) + "=", strings.Repeat("x", 72) + "=3D"},
		{"full line then trailing space", strings.Repeat("x", 75) + " \n", strings.Repeat("x", 75) + "=\r\n=20\r\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Append(nil, []byte(tt.in))
			if string(got) != tt.want {
				t.Errorf("Append(%q) = %q, want %q", tt.in, got, tt.want)
			}
			checkEncoded(t, []byte(tt.in), got)
		})
	}
}

func TestAppendKeepsDst(t *testing.T) {
	dst := []byte("prefix:")
	got := Append(dst, []byte("a=b"))
	if string(got) != "prefix:a=3Db" {
		t.Fatalf("Append onto a prefix = %q", got)
	}
}

// workloadHTML reads the html body of the shared benchmark workload.
func workloadHTML(tb testing.TB) []byte {
	tb.Helper()
	var call struct {
		Message struct {
			HTML string `json:"html"`
			Text string `json:"text"`
		} `json:"message"`
	}
	if err := json.Unmarshal(workload.Read(tb), &call); err != nil {
		tb.Fatalf("decoding the workload: %v", err)
	}
	return []byte(call.Message.HTML)
}

func TestAppendWorkload(t *testing.T) {
	html := workloadHTML(t)
	checkEncoded(t, html, Append(nil, html))
}

func FuzzRoundTrip(f *testing.F) {
	for _, s := range []string{
		"", "a", "=", "\r", "\n", "\r\n", " \n", "\t\r\n", "Zoë & <b>", "a \rb",
		strings.Repeat("x", 74) + " \n", strings.Repeat("é", 60), strings.Repeat("ab ", 40),
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		checkEncoded(t, src, Append(nil, src))
	})
}

func BenchmarkAppend(b *testing.B) {
	html := workloadHTML(b)
	b.Run("stdlib", func(b *testing.B) {
		var buf bytes.Buffer
		b.SetBytes(int64(len(html)))
		b.ReportAllocs()
		for b.Loop() {
			buf.Reset()
			w := quotedprintable.NewWriter(&buf)
			if _, err := w.Write(html); err != nil {
				b.Fatal(err)
			}
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("qp", func(b *testing.B) {
		buf := make([]byte, 0, MaxLen(len(html)))
		b.SetBytes(int64(len(html)))
		b.ReportAllocs()
		for b.Loop() {
			buf = Append(buf[:0], html)
		}
	})
}
