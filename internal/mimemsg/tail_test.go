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

// TestLinesAsData checks that files given as Lines (WrapBase64 of their
// base64) make the same messages and the same StaticTail as the same files
// given as Data, and that the skeleton refers to the Lines: a change to
// them shows in the next message (which is why the Mailer never changes
// them).
func TestLinesAsData(t *testing.T) {
	for _, parts := range []mimeTestParts{
		{HTML: true, Images: 2}, {Text: true, Attachments: 1},
		{Text: true, HTML: true, Images: 2, Attachments: 2},
	} {
		l := mimeTestLayout(parts)
		asLines := *l
		asLines.Images, asLines.Attachments = toLines(l.Images), toLines(l.Attachments)
		want, err := New(l, mimeSeededRand(1))
		if err != nil {
			t.Fatal(err)
		}
		got, err := New(&asLines, mimeSeededRand(1))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.StaticTail(), want.StaticTail()) {
			t.Errorf("%+v: StaticTail differs with Lines", parts)
		}
		if got.StaticSize() != want.StaticSize() {
			t.Errorf("%+v: StaticSize %d with Lines, %d with Data", parts, got.StaticSize(), want.StaticSize())
		}
		v := mimeTestVarying()
		wantMsg, err := want.Append(nil, v)
		if err != nil {
			t.Fatal(err)
		}
		gotMsg, err := got.Append(nil, v)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(gotMsg, wantMsg) {
			t.Fatalf("%+v: the message differs with Lines:\n%s\nwant:\n%s", parts, gotMsg, wantMsg)
		}
		files := append(asLines.Attachments, asLines.Images...)
		files[0].Lines[0] = '#'
		again, err := got.Append(nil, v)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(again, []byte("\r\n\r\n#")) {
			t.Errorf("%+v: a change to Lines does not show: the skeleton copied them", parts)
		}
	}
}

// toLines returns files with their Data given as Lines instead.
func toLines(files []File) []File {
	out := make([]File, len(files))
	for i, f := range files {
		f.Lines = WrapBase64(nil, base64.StdEncoding.EncodeToString(f.Data))
		f.Data = nil
		out[i] = f
	}
	return out
}
