package mimemsg

import (
	"bytes"
	"encoding/base64"
	"testing"
)

// TestStaticTail checks that every message Append builds ends with the
// skeleton's StaticTail, whatever the recipient, and that the tail holds
// the base64 of every file of the message.
func TestStaticTail(t *testing.T) {
	for _, parts := range []mimeTestParts{
		{Text: true}, {HTML: true}, {Text: true, HTML: true},
		{HTML: true, Images: 2}, {Text: true, Attachments: 1},
		{Text: true, HTML: true, Images: 2, Attachments: 2},
	} {
		l := mimeTestLayout(parts)
		sk, err := New(l, mimeSeededRand(1))
		if err != nil {
			t.Fatal(err)
		}
		tail := sk.StaticTail()
		for _, v := range []*Varying{mimeTestVarying(), {ToAddr: "b@example.org", HeaderValues: []string{""}, Text: []byte("x"), HTML: []byte("y\n")}} {
			msg, err := sk.Append(nil, v)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.HasSuffix(msg, tail) {
				t.Errorf("%+v: the message does not end with StaticTail %q", parts, tail)
			}
		}
		files := l.Attachments
		if l.HasHTML {
			files = append(files, l.Images...)
		}
		for _, f := range files {
			line := base64.StdEncoding.EncodeToString(f.Data)[:76]
			if !bytes.Contains(tail, []byte(line)) {
				t.Errorf("%+v: StaticTail lacks the base64 of %s", parts, f.Name)
			}
		}
	}
}
