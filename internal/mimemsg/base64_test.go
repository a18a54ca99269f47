package mimemsg

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"
)

// checkBase64Like checks CheckBase64 and WrapBase64 against
// encoding/base64 for s: the same verdict as Strict decoding, the decoded
// length, and the same lines as encoding the decoded content.
func checkBase64Like(t *testing.T, s string) {
	t.Helper()
	want, werr := base64.StdEncoding.Strict().DecodeString(s)
	n, err := CheckBase64(s)
	if (err == nil) != (werr == nil) {
		t.Fatalf("CheckBase64(%q) = %d, %v; Strict decoding: %v", s, n, err, werr)
	}
	if err != nil {
		if _, ok := err.(base64.CorruptInputError); !ok {
			t.Fatalf("CheckBase64(%q): %T, want base64.CorruptInputError", s, err)
		}
		return
	}
	if n != len(want) {
		t.Fatalf("CheckBase64(%q) = %d, want %d", s, n, len(want))
	}
	if got, wantLines := WrapBase64(nil, s), appendBase64Lines(nil, want); !bytes.Equal(got, wantLines) {
		t.Fatalf("WrapBase64(%q) = %q, want %q", s, got, wantLines)
	}
}

func TestCheckBase64(t *testing.T) {
	long := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0xfb, 0xef, 0x00, 0x41}, 100))
	for _, s := range []string{
		"", "QQ==", "QUI=", "QUJD", "QR==", "QUJ=", "QQ=", "QQ", "Q", "====", "A===", "AB=C", "QQ==QQ==",
		"QQ==\r\n", "Q\r\nQ=\n=", "\r\n", "QU JD", "QUJD\x00", "-_-_", "QUJD\xff", long, long + "\r\n",
		strings.ReplaceAll(long, "A", "\r\nA"), long[:len(long)-1] + "!", "QUJDRA==", "QUJDRA=\r\n=",
	} {
		checkBase64Like(t, s)
	}
}

func FuzzCheckBase64(f *testing.F) {
	for _, s := range []string{"", "QQ==", "QUI=", "QUJD", "QR==", "Q\r\nQ=\n=", "AB=C", "QUJDRA=="} {
		f.Add(s)
	}
	f.Add(base64.StdEncoding.EncodeToString(bytes.Repeat([]byte("postroom"), 20)))
	f.Fuzz(func(t *testing.T, s string) { checkBase64Like(t, s) })
}

func BenchmarkBase64(b *testing.B) {
	data := bytes.Repeat([]byte{0x89, 'P', 'N', 'G', 0x0d, 0x0a, 0x1a, 0x0a, 0xfe}, 50<<10/9)
	text := base64.StdEncoding.EncodeToString(data)
	var dst []byte
	b.Run("check+rewrap", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := CheckBase64(text); err != nil {
				b.Fatal(err)
			}
			dst = WrapBase64(dst[:0], text)
		}
	})
	b.Run("decode+encode", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		b.ReportAllocs()
		for b.Loop() {
			d, err := base64.StdEncoding.Strict().DecodeString(text)
			if err != nil {
				b.Fatal(err)
			}
			dst = appendBase64Lines(dst[:0], d)
		}
	})
}
