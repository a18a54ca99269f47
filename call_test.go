package postroom_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/postroom/postroom"
)

// TestFileFromBytes sends an attachment and an inline image made from raw
// bytes (every byte value, and lengths that pad base64 differently) and
// reads them back from the message, byte for byte.
func TestFileFromBytes(t *testing.T) {
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	for _, data := range [][]byte{all, all[:1], all[:2], all[:3], bytes.Repeat(all, 40)} {
		t.Run(fmt.Sprint(len(data)), func(t *testing.T) {
			call := smallCall("a@example.com")
			call.Message.HTML = `<p>Hi</p><img src="cid:logo">`
			call.Message.Attachments = []postroom.Attachment{postroom.FileFromBytes("report.bin", "application/octet-stream", data)}
			call.Message.Images = []postroom.Image{postroom.ImageFromBytes("logo.png", "logo", "image/png", data)}
			res, msg := sendOne(t, call)
			if res.Status != postroom.StatusSent {
				t.Fatalf("result %+v", res)
			}
			if got := msg.Leaf(t, "application/octet-stream").Body; !bytes.Equal(got, data) {
				t.Errorf("attachment: %d bytes back, want the %d sent", len(got), len(data))
			}
			img := msg.Leaf(t, "image/png")
			if got := img.Body; !bytes.Equal(got, data) {
				t.Errorf("image: %d bytes back, want the %d sent", len(got), len(data))
			}
			if cid := img.Header.Get("Content-ID"); cid != "<logo>" {
				t.Errorf("image Content-ID %q, want <logo>", cid)
			}
		})
	}
	t.Run("does not keep data", func(t *testing.T) {
		data := []byte("abc")
		a := postroom.FileFromBytes("a.txt", "text/plain", data)
		data[0] = 'x'
		if a.Content != "YWJj" {
			t.Errorf("Content %q changed with the caller's bytes", a.Content)
		}
	})
}

// Attach bytes as they are: the Attachment holds them as the spec's
// base64, and its JSON is what an HTTP caller sends.
func ExampleFileFromBytes() {
	msg := postroom.Message{
		FromEmail: "reports@example.com",
		Subject:   "Your report",
		HTML:      `<p>Attached.</p><img src="cid:logo">`,
		Attachments: []postroom.Attachment{
			postroom.FileFromBytes("report.csv", "text/csv", []byte("day,sent\nmon,42\n")),
		},
		Images: []postroom.Image{
			postroom.ImageFromBytes("logo.gif", "logo", "image/gif", []byte("GIF89a")),
		},
	}
	out, err := json.Marshal(struct {
		Attachments []postroom.Attachment `json:"attachments"`
		Images      []postroom.Image      `json:"images"`
	}{msg.Attachments, msg.Images})
	if err != nil {
		panic(err)
	}
	fmt.Println(string(out))
	// Output:
	// {"attachments":[{"name":"report.csv","content_type":"text/csv","content":"ZGF5LHNlbnQKbW9uLDQyCg=="}],"images":[{"name":"logo.gif","cid":"logo","content_type":"image/gif","content":"R0lGODlh"}]}
}
