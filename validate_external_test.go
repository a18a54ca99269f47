package postroom_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/testkit/workload"
	"github.com/postroom/postroom/templatestore"
	"github.com/postroom/postroom/transport"
)

func TestRecipientChecks(t *testing.T) {
	call := smallCall("ok@example.com", "bad@", "OK@Example.com", "b@bücher.example", "c@example.com", "d@example.com", "e@example.com")
	call.Recipients[4].Name = "Eve\r\nBcc: evil@example.com"
	call.Recipients[5].Params = map[string]any{"name": "x\r\nBcc: evil@example.com"}
	call.Message.Headers = []postroom.Header{{Name: "X-Id", Value: "{{id}}"}}
	call.Recipients[6].Params = map[string]any{"name": "E", "id": "1\nX-Evil: yes"}
	mem := transport.NewMemory()
	results, err := newMailer(t, mem, postroom.Options{}).Send(t.Context(), call)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		status postroom.Status
		code   postroom.ReasonCode
	}{
		{postroom.StatusSent, ""},
		{postroom.StatusInvalid, postroom.ReasonInvalidEmail},
		{postroom.StatusInvalid, postroom.ReasonDuplicate},
		{postroom.StatusSent, ""},
		{postroom.StatusInvalid, postroom.ReasonHeaderInjection},
		{postroom.StatusInvalid, postroom.ReasonHeaderInjection},
		{postroom.StatusInvalid, postroom.ReasonHeaderInjection},
	}
	for i, w := range want {
		r := results[i]
		if r.Status != w.status || r.Code != w.code || r.Email != call.Recipients[i].Email {
			t.Errorf("result %d = %+v, want %s %s", i, r, w.status, w.code)
		}
		if (r.Status == postroom.StatusInvalid) != (r.SendID == "") {
			t.Errorf("result %d: send_id %q with status %s", i, r.SendID, r.Status)
		}
	}
	for _, env := range mem.Envelopes() {
		if bytes.Contains(env.Data, []byte("evil@")) || bytes.Contains(env.Data, []byte("X-Evil")) {
			t.Fatalf("an injected header reached a message")
		}
	}
	if env, _ := mem.Envelope(results[3].SendID); env.To[0] != "b@xn--bcher-kva.example" {
		t.Fatalf("IDN recipient envelope To %q", env.To)
	}
}

// validationFields returns the Field of every ValidationError in err.
func validationFields(err error) []string {
	var fields []string
	for _, ve := range postroom.ValidationErrors(err) {
		fields = append(fields, ve.Field)
	}
	return fields
}

func TestValidation(t *testing.T) {
	b64 := base64.StdEncoding.EncodeToString
	png := postroom.Image{Name: "logo.png", CID: "logo", ContentType: "image/png", Content: b64([]byte("png"))}
	tests := []struct {
		name   string
		tmpl   bool
		mutate func(c *postroom.Call)
		fields []string
	}{
		{"from_email missing", false, func(c *postroom.Call) { c.Message.FromEmail = "" }, []string{"message.from_email"}},
		{"from_email bad", false, func(c *postroom.Call) { c.Message.FromEmail = "nope" }, []string{"message.from_email"}},
		{"no body", false, func(c *postroom.Call) { c.Message.HTML, c.Message.Text = "", "" }, []string{"message.html"}},
		{"template id in send", false, func(c *postroom.Call) { c.Message.HTMLTemplateID = "x" }, []string{"message.html_template_id"}},
		{"no template id", true, func(c *postroom.Call) { c.Message.HTML, c.Message.Text = "", "" }, []string{"message.html_template_id"}},
		{"engine", false, func(c *postroom.Call) { c.Message.TemplateEngine = "mustache" }, []string{"message.template_engine"}},
		{"engine handlebars ok", false, func(c *postroom.Call) { c.Message.TemplateEngine = "handlebars" }, nil},
		{"replyto bad", false, func(c *postroom.Call) { c.Message.ReplyToEmail = "x@" }, []string{"message.replyto_email"}},
		{"subject syntax", false, func(c *postroom.Call) { c.Message.Subject = "Hi {{name" }, []string{"message.subject"}},
		{"html syntax", false, func(c *postroom.Call) { c.Message.HTML = "<p>\n{{#if a}}x" }, []string{"message.html"}},
		{"unknown helper", false, func(c *postroom.Call) { c.Message.Text = "{{shout name}}" }, []string{"message.text"}},
		{"partial", false, func(c *postroom.Call) { c.Message.Text = "{{> footer}}" }, []string{"message.text"}},
		{"equal arity", false, func(c *postroom.Call) { c.Message.HTML = "{{equal A A A}}" }, []string{"message.html"}},
		{"header value syntax", false, func(c *postroom.Call) { c.Message.Headers = []postroom.Header{{Name: "X-A", Value: "{{#each}}"}} }, []string{"message.headers[0].value"}},
		{"header name reserved", false, func(c *postroom.Call) {
			c.Message.Headers = []postroom.Header{{Name: "x", Value: "1"}, {Name: "bcc", Value: "e@example.com"}}
		}, []string{"message.headers[1].name"}},
		{"header name ftext", false, func(c *postroom.Call) { c.Message.Headers = []postroom.Header{{Name: "X Y", Value: "1"}} }, []string{"message.headers[0].name"}},
		{"header value CRLF", false, func(c *postroom.Call) {
			c.Message.Headers = []postroom.Header{{Name: "X-A", Value: "1\r\nBcc: e@example.com"}}
		}, []string{"message.headers[0].value"}},
		{"image base64", false, func(c *postroom.Call) {
			c.Message.HTML = `<img src="cid:logo">`
			img := png
			img.Content = "not base64!"
			c.Message.Images = []postroom.Image{img}
		}, []string{"message.images[0].content"}},
		{"image content type", false, func(c *postroom.Call) {
			c.Message.HTML = `<img src="cid:logo">`
			img := png
			img.ContentType = "application/pdf"
			c.Message.Images = []postroom.Image{img}
		}, []string{"message.images[0].content_type"}},
		{"image cid chars", false, func(c *postroom.Call) {
			c.Message.HTML = `<img src="cid:logo">`
			img := png
			img.CID = "lo go>"
			c.Message.Images = []postroom.Image{png, img}
		}, []string{"message.images[1].cid"}},
		{"image not referenced", false, func(c *postroom.Call) { c.Message.Images = []postroom.Image{png} }, []string{"message.images[0].cid"}},
		{"cid without image", false, func(c *postroom.Call) { c.Message.HTML = `<img src="cid:nothere">` }, []string{"message.html"}},
		{"duplicate cid", false, func(c *postroom.Call) {
			c.Message.HTML = `<img src="cid:logo">`
			c.Message.Images = []postroom.Image{png, png}
		}, []string{"message.images[1].cid"}},
		{"attachment multipart", false, func(c *postroom.Call) {
			c.Message.Attachments = []postroom.Attachment{{Name: "x", ContentType: "multipart/mixed; boundary=x", Content: b64([]byte("x"))}}
		}, []string{"message.attachments[0].content_type"}},
		{"attachment message/rfc822", false, func(c *postroom.Call) {
			c.Message.Attachments = []postroom.Attachment{{Name: "x.eml", ContentType: "message/rfc822", Content: b64([]byte("x"))}}
		}, []string{"message.attachments[0].content_type"}},
		{"attachment bad type", false, func(c *postroom.Call) {
			c.Message.Attachments = []postroom.Attachment{{Name: "x", ContentType: "text/", Content: b64([]byte("x"))}}
		}, []string{"message.attachments[0].content_type"}},
		{"attachment unpadded base64", false, func(c *postroom.Call) {
			c.Message.Attachments = []postroom.Attachment{{Name: "x", ContentType: "text/plain", Content: "eA"}}
		}, []string{"message.attachments[0].content"}},
		{"bcc", false, func(c *postroom.Call) { c.Message.BCC = "a@example.com, bad" }, []string{"message.bcc"}},
		// The caller's input, refused as such (a 400, not a 500).
		{"header name 2,000 octets", false, func(c *postroom.Call) {
			c.Message.Headers = []postroom.Header{{Name: "X-" + strings.Repeat("a", 1998), Value: "1"}}
		}, []string{"message.headers[0].name"}},
		{"header name 77 octets", false, func(c *postroom.Call) {
			c.Message.Headers = []postroom.Header{{Name: "X-" + strings.Repeat("a", 75), Value: "1"}}
		}, []string{"message.headers[0].name"}},
		{"header name 76 octets ok", false, func(c *postroom.Call) {
			c.Message.Headers = []postroom.Header{{Name: "X-" + strings.Repeat("a", 74), Value: "1"}}
		}, nil},
		{"static header value unfoldable", false, func(c *postroom.Call) {
			c.Message.Headers = []postroom.Header{{Name: "X-A", Value: "1"}, {Name: "X-Token", Value: strings.Repeat("t", 1200)}}
		}, []string{"message.headers[1].value"}},
		{"static header value long but foldable", false, func(c *postroom.Call) {
			c.Message.Headers = []postroom.Header{{Name: "X-Token", Value: strings.Repeat("word ", 400)}}
		}, nil},
		{"101 headers", false, func(c *postroom.Call) {
			for i := range 101 {
				c.Message.Headers = append(c.Message.Headers, postroom.Header{Name: fmt.Sprintf("X-H%d", i), Value: "1"})
			}
		}, []string{"message.headers"}},
		{"100 headers ok", false, func(c *postroom.Call) {
			for i := range 100 {
				c.Message.Headers = append(c.Message.Headers, postroom.Header{Name: fmt.Sprintf("X-H%d", i), Value: "1"})
			}
		}, nil},
		// Encoded-word look-alikes in every address field.
		{"from_email encoded word", false, func(c *postroom.Call) {
			c.Message.FromEmail = "=?utf-8?q?ceo=40shop.example.com?=@attacker.example"
		}, []string{"message.from_email"}},
		{"replyto_email encoded word", false, func(c *postroom.Call) {
			c.Message.ReplyToEmail = "=?utf-8?q?help=40shop.example.com?=@attacker.example"
		}, []string{"message.replyto_email"}},
		{"bcc encoded word", false, func(c *postroom.Call) {
			c.Message.BCC = "audit@example.com, =?utf-8?q?ann=40victim.example?=@attacker.example"
		}, []string{"message.bcc[1]"}},
		{"from_email trailing CR", false, func(c *postroom.Call) { c.Message.FromEmail += "\r" }, []string{"message.from_email"}},
		{"replyto_email trailing LF", false, func(c *postroom.Call) { c.Message.ReplyToEmail = "help@shop.example.com\n" }, []string{"message.replyto_email"}},
		{"from_email spaces trimmed", false, func(c *postroom.Call) { c.Message.FromEmail = " \t" + c.Message.FromEmail + " " }, nil},
		// Control characters in names.
		{"from_name vertical tab", false, func(c *postroom.Call) { c.Message.FromName = "Shop\vX" }, []string{"message.from_name"}},
		{"replyto_name form feed", false, func(c *postroom.Call) {
			c.Message.ReplyToName, c.Message.ReplyToEmail = "Help\f", "help@shop.example.com"
		}, []string{"message.replyto_name"}},
		{"from_name C1 control", false, func(c *postroom.Call) { c.Message.FromName = "Shop\u0085" }, []string{"message.from_name"}},
		{"from_name tab ok", false, func(c *postroom.Call) { c.Message.FromName = "Shop\tX" }, nil},
		{"attachment name vertical tab", false, func(c *postroom.Call) {
			c.Message.Attachments = []postroom.Attachment{{Name: "a\v.txt", ContentType: "text/plain", Content: b64([]byte("x"))}}
		}, []string{"message.attachments[0].name"}},
		// Content types are type/subtype.
		{"attachment content type tabs and a token", false, func(c *postroom.Call) {
			c.Message.Attachments = []postroom.Attachment{{Name: "x", ContentType: strings.Repeat("\t", 50) + "x", Content: b64([]byte("x"))}}
		}, []string{"message.attachments[0].content_type"}},
		{"attachment content type token", false, func(c *postroom.Call) {
			c.Message.Attachments = []postroom.Attachment{{Name: "x", ContentType: "pdf", Content: b64([]byte("x"))}}
		}, []string{"message.attachments[0].content_type"}},
		{"attachment content type too long", false, func(c *postroom.Call) {
			c.Message.Attachments = []postroom.Attachment{{Name: "x", ContentType: "text/plain; x=" + strings.Repeat("y", 1200), Content: b64([]byte("x"))}}
		}, []string{"message.attachments[0].content_type"}},
		{"image content type token", false, func(c *postroom.Call) {
			c.Message.HTML = `<img src="cid:logo">`
			img := png
			img.ContentType = "image"
			c.Message.Images = []postroom.Image{img}
		}, []string{"message.images[0].content_type"}},
		{"attachment content type with white space ok", false, func(c *postroom.Call) {
			c.Message.Attachments = []postroom.Attachment{{Name: "x", ContentType: " text/plain ; charset=utf-8", Content: b64([]byte("x"))}}
		}, nil},
		// One bad cid, one error.
		{"image cid non-ascii", false, func(c *postroom.Call) {
			c.Message.HTML = `<img src="cid:logo@größe">`
			img := png
			img.CID = "logo@größe"
			c.Message.Images = []postroom.Image{img}
		}, []string{"message.images[0].cid"}},
		{"several at once", false, func(c *postroom.Call) {
			c.Message.FromName = "x\ny"
			c.Message.Subject = "{{#if}}"
			c.Message.BCC = "bad"
		}, []string{"message.from_name"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			call := smallCall("a@example.com")
			if tt.tmpl {
				call.Message.HTMLTemplateID = "x"
			}
			tt.mutate(call)
			var sent atomic.Int64
			m := newMailer(t, postroom.TransportFunc(func(context.Context, *postroom.Envelope) error { sent.Add(1); return nil }), postroom.Options{Templates: templatestore.NewMemory()})
			send := m.Send
			if tt.tmpl {
				send = m.SendTemplate
			}
			results, err := send(t.Context(), call)
			if tt.fields == nil {
				if err != nil || results[0].Status != postroom.StatusSent {
					t.Fatalf("Send = %v, %v; want sent", results, err)
				}
				return
			}
			if results != nil || sent.Load() != 0 {
				t.Fatalf("refused call returned %d results and sent %d messages", len(results), sent.Load())
			}
			var ve *postroom.ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("error %v is not a ValidationError", err)
			}
			if got := validationFields(err); strings.Join(got, " ") != strings.Join(tt.fields, " ") {
				t.Fatalf("fields %q, want %q (%v)", got, tt.fields, err)
			}
		})
	}
}

func TestRecipientLimits(t *testing.T) {
	var sent atomic.Int64
	m := newMailer(t, postroom.TransportFunc(func(context.Context, *postroom.Envelope) error { sent.Add(1); return nil }), postroom.Options{})
	call := smallCall()
	call.Message.HTML = ""
	call.Recipients = make([]postroom.Recipient, 25000)
	for i := range call.Recipients {
		call.Recipients[i] = postroom.Recipient{Email: workload.Address(i)}
	}
	results, err := m.Send(t.Context(), call)
	if err != nil || len(results) != 25000 || sent.Load() != 25000 {
		t.Fatalf("25,000 recipients: %d results, %d sent, err %v", len(results), sent.Load(), err)
	}
	for i, r := range results {
		if r.Email != call.Recipients[i].Email || r.Status != postroom.StatusSent {
			t.Fatalf("result %d = %+v", i, r)
		}
	}
	sent.Store(0)
	call.Recipients = append(call.Recipients, postroom.Recipient{Email: "one.more@example.org"})
	if results, err := m.Send(t.Context(), call); !errors.Is(err, postroom.ErrTooManyRecipients) || results != nil || sent.Load() != 0 {
		t.Fatalf("25,001 recipients: err %v, %d results, %d sent", err, len(results), sent.Load())
	} else if msg := err.Error(); !strings.Contains(msg, "25001, at most 25000 (Options.MaxRecipients)") || !strings.Contains(msg, "JobSize") {
		t.Errorf("the error %q says neither which option limits nor what to do", msg)
	}
	call.Recipients = nil
	if _, err := m.Send(t.Context(), call); !errors.Is(err, postroom.ErrNoRecipients) {
		t.Fatalf("no recipients: err %v", err)
	}
}

// TestMisspeltBodyPointsToDecodeCall: a body whose html is misspelt
// ("htmll"), decoded with json.Unmarshal, which drops unknown fields, is
// refused on message.html with a reason that points to DecodeCall, and
// DecodeCall does name the misspelt field.
func TestMisspeltBodyPointsToDecodeCall(t *testing.T) {
	body := []byte(`{"message": {"from_email": "shop@example.com", "subject": "Hi", "htmll": "<p>Hi</p>"}, "recipients": [{"email": "a@example.com"}]}`)
	var call postroom.Call
	if err := json.Unmarshal(body, &call); err != nil {
		t.Fatal(err)
	}
	m, err := postroom.New(transport.NewMemory(), postroom.Options{Auth: postroom.NoAuth{}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Send(t.Context(), &call)
	var ve *postroom.ValidationError
	if !errors.As(err, &ve) || ve.Field != "message.html" || !strings.Contains(ve.Reason, "DecodeCall") {
		t.Fatalf("Send: %v; want a ValidationError on message.html pointing to DecodeCall", err)
	}
	_, err = postroom.DecodeCall(body)
	if !errors.As(err, &ve) || ve.Field != "message.htmll" {
		t.Fatalf("DecodeCall: %v; want a ValidationError on message.htmll", err)
	}
}
