package postroom_test

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/postroomtest"
	"github.com/postroom/postroom/transport"
)

func TestMIMETree(t *testing.T) {
	img := postroom.Image{Name: "a.png", CID: "a", ContentType: "image/png", Content: base64.StdEncoding.EncodeToString([]byte("PNG"))}
	att := postroom.Attachment{Name: "f.txt", ContentType: "text/plain", Content: base64.StdEncoding.EncodeToString([]byte("file"))}
	tests := []struct {
		name      string
		html, txt string
		images    []postroom.Image
		atts      []postroom.Attachment
		want      string
	}{
		{"text only", "", "t", nil, nil, "text/plain"},
		{"html only", "<b>h</b>", "", nil, nil, "multipart/alternative>text/plain multipart/alternative>text/html"},
		{"both", "<b>h</b>", "t", nil, nil, "multipart/alternative>text/plain multipart/alternative>text/html"},
		{"html and image", `<img src="cid:a">`, "", []postroom.Image{img}, nil, "multipart/alternative>text/plain multipart/alternative>multipart/related>text/html multipart/alternative>multipart/related>image/png"},
		{"both and image", `<img src="cid:a">`, "t", []postroom.Image{img}, nil, "multipart/alternative>text/plain multipart/alternative>multipart/related>text/html multipart/alternative>multipart/related>image/png"},
		{"text and attachment", "", "t", nil, []postroom.Attachment{att}, "multipart/mixed>text/plain multipart/mixed>text/plain"},
		{"html, image, attachment", `<img src="cid:a">`, "", []postroom.Image{img}, []postroom.Attachment{att}, "multipart/mixed>multipart/alternative>text/plain multipart/mixed>multipart/alternative>multipart/related>text/html multipart/mixed>multipart/alternative>multipart/related>image/png multipart/mixed>text/plain"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			call := smallCall("a@example.com")
			call.Message.HTML, call.Message.Text = tt.html, tt.txt
			call.Message.Images, call.Message.Attachments = tt.images, tt.atts
			res, p := sendOne(t, call)
			if p == nil {
				t.Fatalf("result %+v", res)
			}
			if got := strings.Join(p.Paths(), " "); got != tt.want {
				t.Fatalf("tree %q, want %q", got, tt.want)
			}
		})
	}
}

func TestMessageTooLarge(t *testing.T) {
	call := smallCall("a@example.com", "b@example.com")
	call.Recipients[1].Params = map[string]any{"name": strings.Repeat("long ", 2000)}
	call.Message.Subject = "s"
	results, err := newMailer(t, transport.NewMemory(), postroom.Options{MaxMessageBytes: 4000}).Send(t.Context(), call)
	if err != nil {
		t.Fatal(err)
	}
	if results[0].Status != postroom.StatusSent || results[1].Status != postroom.StatusInvalid || results[1].Code != postroom.ReasonMessageTooLarge {
		t.Fatalf("results %+v", results)
	}
	call.Message.Attachments = []postroom.Attachment{{Name: "big.bin", Content: base64.StdEncoding.EncodeToString(make([]byte, 8000))}}
	_, err = newMailer(t, transport.NewMemory(), postroom.Options{MaxMessageBytes: 4000}).Send(t.Context(), call)
	var ve *postroom.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("err %v, want a ValidationError", err)
	}
}

// TestGeneratedTextPart checks that a call with html and no text gets a
// text/plain alternative made from each recipient's rendered html, and
// that Options.HTMLOnly turns it off.
func TestGeneratedTextPart(t *testing.T) {
	call := smallCall("ann@example.net", "bob@example.org")
	call.Recipients[1].Params = map[string]any{"name": "Bob"}
	call.Message.Text = ""
	call.Message.HTML = `<html><head><style>p{color:red}</style></head><body><h1>Hi {{name}}</h1><p>Your <a href="https://shop.example.com/o/{{name}}">order</a> &amp; more.</p></body></html>`
	for _, tc := range []struct {
		name     string
		htmlOnly bool
		tree     string
	}{
		{"generated", false, "multipart/alternative>text/plain multipart/alternative>text/html"},
		{"HTMLOnly", true, "text/html"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := transport.NewMemory()
			results, err := newMailer(t, mem, postroom.Options{HTMLOnly: tc.htmlOnly}).Send(t.Context(), call)
			if err != nil {
				t.Fatal(err)
			}
			for i, r := range results {
				env, ok := mem.Envelope(r.SendID)
				if !ok {
					t.Fatalf("recipient %d: %+v", i, r)
				}
				msg := postroomtest.Parse(t, env.Data)
				if got := strings.Join(msg.Paths(), " "); got != tc.tree {
					t.Fatalf("tree %q, want %q", got, tc.tree)
				}
				if tc.htmlOnly {
					continue
				}
				name := []string{"Ann", "Bob"}[i]
				want := "# Hi " + name + "\r\n\r\nYour order (https://shop.example.com/o/" + name + ") & more.\r\n"
				if got := string(msg.Parts[0].Body); got != want {
					t.Errorf("recipient %d: text %q, want %q", i, got, want)
				}
			}
		})
	}
}

// TestGeneratedTextNotWhenTextGiven checks that a given text part is
// kept as it is.
func TestGeneratedTextNotWhenTextGiven(t *testing.T) {
	_, msg := sendOne(t, smallCall("ann@example.net"))
	if got := string(msg.Parts[0].Body); got != "Hi Ann!" {
		t.Errorf("text %q, want the call's", got)
	}
}
