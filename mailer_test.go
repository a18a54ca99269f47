package postroom_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"mime"
	"net/mail"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aymerick/raymond"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/fixture"
	"github.com/postroom/postroom/internal/mailtest"
	"github.com/postroom/postroom/internal/workload"
	"github.com/postroom/postroom/templatestore"
	"github.com/postroom/postroom/transport"
)

var sendIDPattern = regexp.MustCompile(`^[0-9a-f]{32}$`)

func newMailer(t testing.TB, tr postroom.Transport, opts postroom.Options) *postroom.Mailer {
	t.Helper()
	if opts.Auth == nil {
		opts.Auth = postroom.NoAuth{}
	}
	m, err := postroom.New(tr, opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return m
}

// smallCall is a minimal valid message.send call.
func smallCall(recipients ...string) *postroom.Call {
	c := &postroom.Call{
		Key: "k", AccountID: "acct",
		Message: postroom.Message{
			FromName: "Shop", FromEmail: "orders@shop.example.com",
			Subject: "Hello {{name}}", Text: "Hi {{name}}!", HTML: "<p>Hi {{name}}!</p>",
		},
	}
	for _, r := range recipients {
		c.Recipients = append(c.Recipients, postroom.Recipient{Email: r, Params: map[string]any{"name": "Ann"}})
	}
	return c
}

func TestSendWorkload(t *testing.T) {
	call := fixture.Shared(t).Call(16)
	call.Message.BCC = "audit@shop.example.com, Archive <archive@shop.example.com>"
	mem := transport.NewMemory()
	m := newMailer(t, mem, postroom.Options{})
	results, err := m.Send(t.Context(), call)
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	if len(results) != 16 || mem.Len() != 16 {
		t.Fatalf("got %d results and %d messages, want 16 and 16", len(results), mem.Len())
	}
	html := raymond.MustParse(call.Message.HTML)
	logo := mustB64(t, call.Message.Images[0].Content)
	banner := mustB64(t, call.Message.Images[1].Content)
	pdf := mustB64(t, call.Message.Attachments[0].Content)
	seen := map[string]bool{}
	for i, res := range results {
		r := call.Recipients[i]
		if res.Email != r.Email || res.Status != postroom.StatusSent || res.Reason != "" {
			t.Fatalf("result %d = %+v, want %s sent", i, res, r.Email)
		}
		if !sendIDPattern.MatchString(res.SendID) || seen[res.SendID] {
			t.Fatalf("result %d send_id %q: not 32 hex or not unique", i, res.SendID)
		}
		seen[res.SendID] = true
		env, ok := mem.Envelope(res.SendID)
		if !ok {
			t.Fatalf("no message for send_id %s", res.SendID)
		}
		if env.From != "orders@shop.example.com" || strings.Join(env.To, " ") != r.Email+" audit@shop.example.com archive@shop.example.com" {
			t.Fatalf("envelope from %q to %q", env.From, env.To)
		}
		p := mailtest.Parse(t, env.Data)
		wantKeys := "From To Subject Date Message-ID MIME-Version X-Campaign-ID X-Entity-Ref-ID List-Unsubscribe Content-Type"
		if got := strings.Join(p.Keys, " "); got != wantKeys {
			t.Fatalf("header fields %q, want %q", got, wantKeys)
		}
		if p.Header.Get("Bcc") != "" || bytes.Contains(env.Data, []byte("audit@")) || bytes.Contains(env.Data, []byte("archive@")) {
			t.Fatalf("a bcc address appears in the message")
		}
		from, _ := p.Header.AddressList("From")
		to, _ := p.Header.AddressList("To")
		if len(from) != 1 || from[0].Name != "Example Shop" || from[0].Address != "orders@shop.example.com" {
			t.Fatalf("From = %v", from)
		}
		if len(to) != 1 || to[0].Name != r.Name || to[0].Address != r.Email {
			t.Fatalf("To = %v, want %s <%s>", to, r.Name, r.Email)
		}
		first := r.Params["first_name"].(string)
		wantSubject := fmt.Sprintf("Your order #%s is confirmed, %s", r.Params["order_id"], first)
		if got := mailtest.DecodeHeader(t, p.Header.Get("Subject")); got != wantSubject {
			t.Fatalf("Subject %q, want %q (no HTML escaping)", got, wantSubject)
		}
		if got := p.Header.Get("Message-ID"); got != "<"+res.SendID+"@shop.example.com>" {
			t.Fatalf("Message-ID %q", got)
		}
		if _, err := p.Header.Date(); err != nil {
			t.Fatalf("Date: %v", err)
		}
		if p.Header.Get("MIME-Version") != "1.0" || p.Header.Get("X-Campaign-ID") != "order-confirmation-2024" {
			t.Fatalf("headers %v", p.Header)
		}
		wantPaths := []string{
			"multipart/mixed>multipart/alternative>text/plain",
			"multipart/mixed>multipart/alternative>multipart/related>text/html",
			"multipart/mixed>multipart/alternative>multipart/related>image/png",
			"multipart/mixed>multipart/alternative>multipart/related>image/png",
			"multipart/mixed>application/pdf",
		}
		if got := strings.Join(p.Paths(), " "); got != strings.Join(wantPaths, " ") {
			t.Fatalf("tree %v, want %v", p.Paths(), wantPaths)
		}
		params := maps.Clone(call.GlobalParams)
		maps.Copy(params, r.Params)
		wantHTML, err := html.Exec(params)
		if err != nil {
			t.Fatal(err)
		}
		// Text bodies travel with CRLF line breaks (RFC 2045 §6.7).
		if got := string(p.Parts[1].Body); got != strings.ReplaceAll(wantHTML, "\n", "\r\n") {
			t.Fatalf("recipient %d: html differs from raymond's rendering", i)
		}
		text := string(p.Parts[0].Body)
		if !strings.Contains(text, "Hi "+first+",") || strings.Contains(text, "&apos;") || strings.Contains(text, "&amp;") {
			t.Fatalf("text body not rendered as is: %.80q", text)
		}
		for j, img := range [][]byte{logo, banner} {
			pt := p.Parts[2+j]
			if pt.Header.Get("Content-ID") != "<"+call.Message.Images[j].CID+">" || !strings.HasPrefix(pt.Header.Get("Content-Disposition"), "inline") || !bytes.Equal(pt.Body, img) {
				t.Fatalf("image %d: Content-ID %q, disposition %q, %d bytes", j, pt.Header.Get("Content-ID"), pt.Header.Get("Content-Disposition"), len(pt.Body))
			}
		}
		att := p.Parts[4]
		if !bytes.Equal(att.Body, pdf) || !strings.Contains(att.Header.Get("Content-Disposition"), "invoice.pdf") {
			t.Fatalf("attachment: %d bytes, disposition %q", len(att.Body), att.Header.Get("Content-Disposition"))
		}
	}
}

func mustB64(t testing.TB, s string) []byte {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// onlyPart sends one recipient of call and returns the message parsed.
func sendOne(t *testing.T, m *postroom.Mailer, call *postroom.Call) (postroom.Result, *mailtest.Message) {
	t.Helper()
	mem := transport.NewMemory()
	m2 := m
	if m2 == nil {
		m2 = newMailer(t, mem, postroom.Options{})
	}
	results, err := m2.Send(t.Context(), call)
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	if results[0].Status != postroom.StatusSent {
		return results[0], nil
	}
	env, ok := mem.Envelope(results[0].SendID)
	if !ok {
		t.Fatalf("no message recorded")
	}
	return results[0], mailtest.Parse(t, env.Data)
}

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
		{"html only", "<b>h</b>", "", nil, nil, "text/html"},
		{"both", "<b>h</b>", "t", nil, nil, "multipart/alternative>text/plain multipart/alternative>text/html"},
		{"html and image", `<img src="cid:a">`, "", []postroom.Image{img}, nil, "multipart/related>text/html multipart/related>image/png"},
		{"both and image", `<img src="cid:a">`, "t", []postroom.Image{img}, nil, "multipart/alternative>text/plain multipart/alternative>multipart/related>text/html multipart/alternative>multipart/related>image/png"},
		{"text and attachment", "", "t", nil, []postroom.Attachment{att}, "multipart/mixed>text/plain multipart/mixed>text/plain"},
		{"html, image, attachment", `<img src="cid:a">`, "", []postroom.Image{img}, []postroom.Attachment{att}, "multipart/mixed>multipart/related>text/html multipart/mixed>multipart/related>image/png multipart/mixed>text/plain"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			call := smallCall("a@example.com")
			call.Message.HTML, call.Message.Text = tt.html, tt.txt
			call.Message.Images, call.Message.Attachments = tt.images, tt.atts
			res, p := sendOne(t, nil, call)
			if p == nil {
				t.Fatalf("result %+v", res)
			}
			if got := strings.Join(p.Paths(), " "); got != tt.want {
				t.Fatalf("tree %q, want %q", got, tt.want)
			}
		})
	}
}

func TestEscaping(t *testing.T) {
	call := smallCall("a@example.com")
	call.Recipients[0].Params = map[string]any{"who": "Tom & Jerry <3", "link": "https://x.example/u?a=1&b=2"}
	call.Message.Subject = "For {{who}}"
	call.Message.Text = "Text {{who}} / {{{who}}}"
	call.Message.HTML = "<p>{{who}}</p><p>{{{who}}}</p>"
	call.Message.Headers = []postroom.Header{{Name: "List-Unsubscribe", Value: "<{{link}}>"}, {Name: "X-Who", Value: "{{who}}"}}
	res, p := sendOne(t, nil, call)
	if p == nil {
		t.Fatalf("result %+v", res)
	}
	if got := mailtest.DecodeHeader(t, p.Header.Get("Subject")); got != "For Tom & Jerry <3" {
		t.Errorf("Subject %q", got)
	}
	if got := p.Header.Get("List-Unsubscribe"); got != "<https://x.example/u?a=1&b=2>" {
		t.Errorf("List-Unsubscribe %q", got)
	}
	if got := mailtest.DecodeHeader(t, p.Header.Get("X-Who")); got != "Tom & Jerry <3" {
		t.Errorf("X-Who %q", got)
	}
	if got := string(p.Find(t, "multipart/alternative>text/plain").Body); got != "Text Tom & Jerry <3 / Tom & Jerry <3" {
		t.Errorf("text %q", got)
	}
	if got := string(p.Find(t, "multipart/alternative>text/html").Body); got != "<p>Tom &amp; Jerry &lt;3</p><p>Tom & Jerry <3</p>" {
		t.Errorf("html %q", got)
	}
}

func TestParams(t *testing.T) {
	call := smallCall("a@example.com")
	call.GlobalParams = map[string]any{"a": "global-a", "b": "global-b", "n": 3.0, "f": 2.5}
	call.Recipients[0].Params = map[string]any{"a": "own-a", "evil": "{{b}}{{#each x}}"}
	call.Message.HTML = ""
	call.Message.Text = "{{a}} {{b}} {{evil}} {{n}} {{f}} [{{missing}}] {{#each obj}}{{@key}}={{this}};{{/each}}"
	call.GlobalParams["obj"] = map[string]any{"zeta": 1.0, "alpha": 2.0, "mid": 3.0}
	res, p := sendOne(t, nil, call)
	if p == nil {
		t.Fatalf("result %+v", res)
	}
	want := "own-a global-b {{b}}{{#each x}} 3 2.5 [] alpha=2;mid=3;zeta=1;"
	if got := string(p.Parts[0].Body); got != want {
		t.Fatalf("text %q, want %q", got, want)
	}
}

func TestStrictParams(t *testing.T) {
	call := smallCall("a@example.com", "b@example.com")
	call.Message.Subject = "{{name}} {{order.id}}"
	call.Message.Text = "{{zip}} {{name}}{{#if flag}}x{{/if}}"
	call.Message.HTML = ""
	call.Recipients[1].Params = map[string]any{"name": "B", "zip": "1", "order": map[string]any{"id": 7.0}}
	mem := transport.NewMemory()
	m := newMailer(t, mem, postroom.Options{StrictParams: true})
	results, err := m.Send(t.Context(), call)
	if err != nil {
		t.Fatal(err)
	}
	if r := results[0]; r.Status != postroom.StatusInvalid || r.Reason != "missing-param: order.id, zip" || r.SendID != "" {
		t.Fatalf("result 0 = %+v", r)
	}
	if r := results[1]; r.Status != postroom.StatusSent {
		t.Fatalf("result 1 = %+v", r)
	}
	if mem.Len() != 1 {
		t.Fatalf("%d messages sent, want 1", mem.Len())
	}
}

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

func TestSyntaxErrorPosition(t *testing.T) {
	call := smallCall("a@example.com")
	call.Message.HTML = "<p>\n<b>{{#if a}}</b>\n"
	_, err := newMailer(t, transport.NewMemory(), postroom.Options{}).Send(t.Context(), call)
	var ve *postroom.ValidationError
	if !errors.As(err, &ve) || ve.Field != "message.html" || !regexp.MustCompile(`line \d+`).MatchString(ve.Reason) {
		t.Fatalf("error %v: want a ValidationError on message.html naming a line", err)
	}
}

func TestSendTemplate(t *testing.T) {
	store := templatestore.NewMemory()
	if err := store.Put("acct", "welcome-html", "<h1>Welcome {{name}}</h1>"); err != nil {
		t.Fatal(err)
	}
	if err := store.Put("acct", "welcome-text", "Welcome {{name}}"); err != nil {
		t.Fatal(err)
	}
	if err := store.Put("other", "secret", "other account's"); err != nil {
		t.Fatal(err)
	}
	mem := transport.NewMemory()
	m := newMailer(t, mem, postroom.Options{Templates: store, Auth: postroom.StaticKeys{"acct": {"k"}, "other": {"k2"}}})
	call := smallCall("a@example.com")
	call.Message.HTML, call.Message.Text = "", ""
	call.Message.HTMLTemplateID, call.Message.TextTemplateID = "welcome-html", "welcome-text"
	call.Message.ReplyToName, call.Message.ReplyToEmail = "Help Desk", "help@shop.example.com"
	results, err := m.SendTemplate(t.Context(), call)
	if err != nil || results[0].Status != postroom.StatusSent {
		t.Fatalf("SendTemplate = %v, %v", results, err)
	}
	env, _ := mem.Envelope(results[0].SendID)
	p := mailtest.Parse(t, env.Data)
	if got := string(p.Find(t, "multipart/alternative>text/html").Body); got != "<h1>Welcome Ann</h1>" {
		t.Fatalf("html %q", got)
	}
	if rt, _ := p.Header.AddressList("Reply-To"); len(rt) != 1 || rt[0].Name != "Help Desk" || rt[0].Address != "help@shop.example.com" {
		t.Fatalf("Reply-To %v", rt)
	}
	if strings.Join(p.Keys[:4], " ") != "From To Reply-To Subject" {
		t.Fatalf("header order %v", p.Keys)
	}

	t.Run("another account's template", func(t *testing.T) {
		c := *call
		c.Message.HTMLTemplateID, c.Message.TextTemplateID = "secret", ""
		_, err := m.SendTemplate(t.Context(), &c)
		var ve *postroom.ValidationError
		if !errors.Is(err, postroom.ErrTemplateNotFound) || !errors.As(err, &ve) || ve.Field != "message.html_template_id" {
			t.Fatalf("err = %v, want ErrTemplateNotFound on message.html_template_id", err)
		}
	})
	t.Run("wrong key", func(t *testing.T) {
		c := *call
		c.Key = "k2"
		if _, err := m.SendTemplate(t.Context(), &c); !errors.Is(err, postroom.ErrUnauthorized) {
			t.Fatalf("err = %v, want ErrUnauthorized", err)
		}
	})
	t.Run("no store", func(t *testing.T) {
		_, err := newMailer(t, mem, postroom.Options{}).SendTemplate(t.Context(), call)
		if !errors.Is(err, postroom.ErrTemplateNotFound) {
			t.Fatalf("err = %v, want ErrTemplateNotFound", err)
		}
	})
}

func TestHostileTemplates(t *testing.T) {
	huge := make([]any, 1_000_000)
	for i := range huge {
		huge[i] = "x"
	}
	tests := []struct {
		name   string
		html   string
		params map[string]any
		call   bool // true: refused at call level; false: the recipient is invalid or sent
	}{
		{"equal arity", "{{equal A A A}}", nil, true},
		{"if on odd path", "{{#if wat[0].fnord}}x{{/if}}", nil, true},
		{"if on odd path with data", "{{#if wat.[0].fnord}}x{{/if}}", map[string]any{"wat": []any{map[string]any{"fnord": true}}}, false},
		{"deep nesting", strings.Repeat("{{#if a}}", 10000) + strings.Repeat("{{/if}}", 10000), map[string]any{"a": true}, true},
		{"huge each", "{{#each big}}{{this}}{{#each ../big}}{{/each}}{{/each}}", map[string]any{"big": huge}, false},
		{"partial", "{{> evil}}", nil, true},
		{"unclosed", "{{#each items}}", nil, true},
		{"lookup without args", "{{lookup}}", nil, true},
		{"lookup on a number", "{{lookup 1 2}}", nil, false},
		{"log", "{{log name}}", nil, false},
		{"func value", "{{f}} {{#each f}}x{{/each}}", map[string]any{"f": func() string { return "called" }}, false},
		{"huge source", strings.Repeat("x", 600<<10), nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			call := smallCall("a@example.com")
			call.Message.HTML, call.Message.Text = tt.html, ""
			if tt.params != nil {
				call.Recipients[0].Params = tt.params
			}
			mem := transport.NewMemory()
			results, err := newMailer(t, mem, postroom.Options{MaxRenderBytes: 1 << 20}).Send(t.Context(), call)
			if tt.call {
				var ve *postroom.ValidationError
				if !errors.As(err, &ve) || ve.Field != "message.html" {
					t.Fatalf("err = %v, want a ValidationError on message.html", err)
				}
				return
			}
			if err != nil || len(results) != 1 {
				t.Fatalf("Send = %v, %v", results, err)
			}
			r := results[0]
			if r.Status == postroom.StatusInvalid && !strings.HasPrefix(r.Reason, "render-error") {
				t.Fatalf("result %+v, want sent or render-error", r)
			}
			if (r.Status == postroom.StatusSent) != (mem.Len() == 1) {
				t.Fatalf("result %+v but %d messages", r, mem.Len())
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
	}
	call.Recipients = nil
	if _, err := m.Send(t.Context(), call); !errors.Is(err, postroom.ErrNoRecipients) {
		t.Fatalf("no recipients: err %v", err)
	}
}

func TestDeliveryErrors(t *testing.T) {
	errFor := map[string]error{
		"perm@example.com":      &postroom.DeliveryError{Permanent: true, Code: 550, Enhanced: "5.1.1", Text: "no such user"},
		"temp@example.com":      &postroom.DeliveryError{Code: 451, Enhanced: "4.3.0", Text: "try later"},
		"net@example.com":       &postroom.DeliveryError{Err: errors.New("connection reset")},
		"plain@example.com":     errors.New("disk full"),
		"uncertain@example.com": &postroom.DeliveryError{Uncertain: true, Err: errors.New("EOF")},
		"partial@example.com":   &postroom.PartialError{Refused: []postroom.RefusedRecipient{{Address: "audit@example.com", Err: &postroom.DeliveryError{Permanent: true, Code: 550, Text: "no"}}}},
		"deadline@example.com":  fmt.Errorf("dial: %w", context.DeadlineExceeded),
	}
	want := map[string]string{
		"ok@example.com":        "sent ",
		"perm@example.com":      "rejected hard-bounce: 550 5.1.1 no such user",
		"temp@example.com":      "deferred soft-bounce: 451 4.3.0 try later",
		"net@example.com":       "deferred connection-failed",
		"plain@example.com":     "deferred connection-failed",
		"uncertain@example.com": "unknown connection-lost-after-data",
		"partial@example.com":   "sent bcc-rejected: audit@example.com (550 no)",
		"deadline@example.com":  "deferred timeout",
	}
	var addrs []string
	for a := range want {
		addrs = append(addrs, a)
	}
	call := smallCall(addrs...)
	call.Message.BCC = "audit@example.com"
	m := newMailer(t, postroom.TransportFunc(func(_ context.Context, env *postroom.Envelope) error { return errFor[env.To[0]] }), postroom.Options{})
	results, err := m.Send(t.Context(), call)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		if got := string(r.Status) + " " + r.Reason; got != want[r.Email] {
			t.Errorf("%s: %q, want %q", r.Email, got, want[r.Email])
		}
		if !sendIDPattern.MatchString(r.SendID) {
			t.Errorf("%s: send_id %q", r.Email, r.SendID)
		}
	}
}

type queuing struct{ postroom.TransportFunc }

func (queuing) Queued() bool { return true }

func TestQueued(t *testing.T) {
	tr := queuing{func(context.Context, *postroom.Envelope) error { return nil }}
	results, err := newMailer(t, tr, postroom.Options{}).Send(t.Context(), smallCall("a@example.com"))
	if err != nil || results[0].Status != postroom.StatusQueued {
		t.Fatalf("Send = %v, %v; want queued", results, err)
	}
}

func TestCancelMidCall(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var calls atomic.Int64
	var accepted sync.Map
	tr := postroom.TransportFunc(func(ctx context.Context, env *postroom.Envelope) error {
		if calls.Add(1) == 50 {
			cancel()
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		accepted.Store(env.To[0], true)
		return nil
	})
	call := smallCall()
	for i := range 1000 {
		call.Recipients = append(call.Recipients, postroom.Recipient{Email: fmt.Sprintf("u%d@example.com", i)})
	}
	before := runtime.NumGoroutine()
	const workers = 4
	results, err := newMailer(t, tr, postroom.Options{Concurrency: workers}).Send(ctx, call)
	if !errors.Is(err, context.Canceled) || len(results) != 1000 {
		t.Fatalf("err %v, %d results", err, len(results))
	}
	sent := 0
	for i, r := range results {
		_, ok := accepted.Load(r.Email)
		switch {
		case r.Email != call.Recipients[i].Email:
			t.Fatalf("result %d is for %s", i, r.Email)
		case ok && r.Status == postroom.StatusSent:
			sent++
		case !ok && r.Status == postroom.StatusDeferred && r.Code == postroom.ReasonCanceled && r.Reason == "canceled":
		default:
			t.Fatalf("result %d = %+v, accepted by the transport: %v", i, r, ok)
		}
	}
	// The 50th call cancels. The calls in flight beside it (at most
	// workers-1) may land on either side of the cancel; no recipient is
	// handed over once a worker has seen it.
	if sent > 49+workers-1 || sent < 49-(workers-1) || calls.Load() > 50+workers-1 {
		t.Fatalf("%d sent, %d transport calls", sent, calls.Load())
	}
	waitGoroutines(t, before)
}

func TestTransportUnusable(t *testing.T) {
	var n atomic.Int64
	tr := postroom.TransportFunc(func(ctx context.Context, env *postroom.Envelope) error {
		n.Add(1)
		return &postroom.DeliveryError{Code: 535, Enhanced: "5.7.8", Text: "bad credentials", Err: postroom.ErrTransportUnusable}
	})
	call := smallCall()
	for i := range 25000 {
		call.Recipients = append(call.Recipients, postroom.Recipient{Email: fmt.Sprintf("u%d@example.com", i)})
	}
	results, err := newMailer(t, tr, postroom.Options{Concurrency: 4}).Send(t.Context(), call)
	if !errors.Is(err, postroom.ErrTransportUnusable) || len(results) != 25000 {
		t.Fatalf("err %v, %d results", err, len(results))
	}
	if n.Load() > 4 {
		t.Fatalf("the transport was called %d times after it said it was unusable", n.Load())
	}
	for i, r := range results {
		if r.Status != postroom.StatusDeferred || !strings.HasPrefix(r.Reason, "connection-failed: ") {
			t.Fatalf("result %d = %+v", i, r)
		}
	}
}

// waitGoroutines waits for the goroutine count to come back to before. A
// worker ends just after Wait returns, with no event to wait for, so it
// polls; the deadline only bounds a failure and is far beyond any
// scheduling delay on a loaded machine.
func waitGoroutines(t *testing.T, before int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines left running after Send returned (%d before)", runtime.NumGoroutine()-before, before)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestNoGoroutineOutlivesSend(t *testing.T) {
	before := runtime.NumGoroutine()
	call := fixture.Shared(t).Call(200)
	if _, err := newMailer(t, transport.NewMemory(), postroom.Options{}).Send(t.Context(), call); err != nil {
		t.Fatal(err)
	}
	// A worker may still be between its deferred Done and its return.
	waitGoroutines(t, before)
}

// fixedRand is a deterministic byte source for Options.Rand.
type fixedRand struct{ b byte }

func (r *fixedRand) Read(p []byte) (int, error) {
	for i := range p {
		r.b = r.b*31 + 7
		p[i] = r.b
	}
	return len(p), nil
}

func TestDeterministic(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var outputs [2][]postroom.Envelope
	for k := range outputs {
		mem := transport.NewMemory()
		m := newMailer(t, mem, postroom.Options{Rand: &fixedRand{}, Now: func() time.Time { return now }})
		if _, err := m.Send(t.Context(), fixture.Shared(t).Call(16)); err != nil {
			t.Fatal(err)
		}
		outputs[k] = mem.Envelopes()
	}
	byID := map[string][]byte{}
	for _, e := range outputs[0] {
		byID[e.SendID] = e.Data
	}
	for _, e := range outputs[1] {
		if !bytes.Equal(byID[e.SendID], e.Data) {
			t.Fatalf("message %s differs between two runs with the same Rand and Now", e.SendID)
		}
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

func TestNew(t *testing.T) {
	tr := transport.NewMemory()
	tests := []struct {
		name string
		tr   postroom.Transport
		opts postroom.Options
	}{
		{"nil auth", tr, postroom.Options{}},
		{"nil transport", nil, postroom.Options{Auth: postroom.NoAuth{}}},
		{"negative concurrency", tr, postroom.Options{Auth: postroom.NoAuth{}, Concurrency: -1}},
		{"negative max recipients", tr, postroom.Options{Auth: postroom.NoAuth{}, MaxRecipients: -1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if m, err := postroom.New(tt.tr, tt.opts); err == nil || m != nil {
				t.Fatalf("New = %v, %v; want an error", m, err)
			}
		})
	}
}

func TestConcurrentCalls(t *testing.T) {
	mem := transport.NewMemory()
	m := newMailer(t, mem, postroom.Options{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			results, err := m.Send(t.Context(), fixture.Shared(t).Call(20))
			if err != nil || len(results) != 20 {
				t.Errorf("Send = %d results, %v", len(results), err)
			}
		})
	}
	wg.Wait()
	if mem.Len() != 80 {
		t.Fatalf("%d messages, want 80", mem.Len())
	}
}

func TestInjection(t *testing.T) {
	b64 := base64.StdEncoding.EncodeToString([]byte("x"))
	fields := []struct {
		name   string
		inject func(c *postroom.Call, s string)
	}{
		{"from_name", func(c *postroom.Call, s string) { c.Message.FromName = "Shop" + s }},
		{"from_email", func(c *postroom.Call, s string) { c.Message.FromEmail = "orders@shop.example.com" + s }},
		{"replyto_name", func(c *postroom.Call, s string) {
			c.Message.ReplyToName, c.Message.ReplyToEmail = "Help"+s, "help@shop.example.com"
		}},
		{"replyto_email", func(c *postroom.Call, s string) { c.Message.ReplyToEmail = "help@shop.example.com" + s }},
		{"subject", func(c *postroom.Call, s string) { c.Message.Subject = "Hi" + s }},
		{"bcc", func(c *postroom.Call, s string) { c.Message.BCC = "audit@example.com" + s }},
		{"header name", func(c *postroom.Call, s string) { c.Message.Headers = []postroom.Header{{Name: "X-A" + s, Value: "1"}} }},
		{"header value", func(c *postroom.Call, s string) { c.Message.Headers = []postroom.Header{{Name: "X-A", Value: "1" + s}} }},
		{"image name", func(c *postroom.Call, s string) {
			c.Message.HTML = `<img src="cid:i">`
			c.Message.Images = []postroom.Image{{Name: "i.png" + s, CID: "i", ContentType: "image/png", Content: b64}}
		}},
		{"image cid", func(c *postroom.Call, s string) {
			c.Message.HTML = `<img src="cid:i">`
			c.Message.Images = []postroom.Image{{Name: "i.png", CID: "i" + s, ContentType: "image/png", Content: b64}}
		}},
		{"image content_type", func(c *postroom.Call, s string) {
			c.Message.HTML = `<img src="cid:i">`
			c.Message.Images = []postroom.Image{{Name: "i.png", CID: "i", ContentType: "image/png" + s, Content: b64}}
		}},
		{"attachment name", func(c *postroom.Call, s string) {
			c.Message.Attachments = []postroom.Attachment{{Name: "a.txt" + s, ContentType: "text/plain", Content: b64}}
		}},
		{"attachment content_type", func(c *postroom.Call, s string) {
			c.Message.Attachments = []postroom.Attachment{{Name: "a.txt", ContentType: "text/plain" + s, Content: b64}}
		}},
		{"recipient email", func(c *postroom.Call, s string) { c.Recipients[0].Email += s }},
		{"recipient name", func(c *postroom.Call, s string) { c.Recipients[0].Name = "Ann" + s }},
		{"param in subject", func(c *postroom.Call, s string) { c.Recipients[0].Params["name"] = "Ann" + s }},
		{"global param in header", func(c *postroom.Call, s string) {
			c.GlobalParams = map[string]any{"u": "https://x.example/" + s}
			c.Message.Headers = []postroom.Header{{Name: "List-Unsubscribe", Value: "<{{u}}>"}}
		}},
		{"param in bodies", func(c *postroom.Call, s string) {
			c.Message.Subject = "fixed"
			c.Recipients[0].Params["name"] = "Ann" + s
		}},
	}
	payloads := map[string]string{
		"CRLF": "\r\nX-Evil: 1", "LF": "\nX-Evil: 1", "CR": "\rX-Evil: 1", "NUL": "\x00X-Evil: 1",
		"CRLF CRLF": "\r\n\r\nX-Evil: 1",
	}
	for _, f := range fields {
		for pname, payload := range payloads {
			t.Run(f.name+"/"+pname, func(t *testing.T) {
				call := smallCall("a@example.com")
				f.inject(call, payload)
				mem := transport.NewMemory()
				results, err := newMailer(t, mem, postroom.Options{}).Send(t.Context(), call)
				var ve *postroom.ValidationError
				switch {
				case err != nil:
					if !errors.As(err, &ve) || mem.Len() != 0 {
						t.Fatalf("err %v (want a ValidationError), %d sent", err, mem.Len())
					}
					return
				case results[0].Status == postroom.StatusInvalid:
					if mem.Len() != 0 {
						t.Fatalf("invalid recipient but %d sent", mem.Len())
					}
					return
				case results[0].Status != postroom.StatusSent:
					t.Fatalf("result %+v", results[0])
				}
				// Neutralised: the message went out; no header was added.
				env := mem.Envelopes()[0]
				p := mailtest.Parse(t, env.Data)
				if p.Header.Get("X-Evil") != "" || slices.Contains(p.Keys, "X-Evil") {
					t.Fatalf("an X-Evil header reached the message: %v", p.Keys)
				}
				for _, pt := range p.Parts {
					if pt.Header.Get("X-Evil") != "" {
						t.Fatalf("an X-Evil header reached part %s", pt.Path)
					}
				}
			})
		}
	}
}

// lookAlikeCall is a call whose display names and file names look like
// RFC 2047 encoded words, paths or disguised extensions.
func lookAlikeCall() (call *postroom.Call, names []string, files map[string]string) {
	names = []string{
		"=?utf-8?q?evil?= <evil@attacker.example>",
		`"=?utf-8?b?ZXZpbEBhdHRhY2tlci5leGFtcGxl?=" <x@y.example>`,
		`é\`,
		`Zoë \ Co`,
	}
	// File name as given → as a reader must see it.
	files = map[string]string{
		"=?utf-8?q?=2E=2E=2F=2E=2E=2Fetc=2Fcron.d=2Fx?=": "x",
		"=?utf-8?q?=2E=2E=5C=2E=2E=5Cboot.ini?=":         "boot.ini",
		"=?utf-8?q?a=0D=0AX-Evil:_1.txt?=":               "aX-Evil: 1.txt",
		"=?utf-8?q?invoice=E2=80=AEfdp.exe?=":            "invoicefdp.exe",
		"invoice\u202efdp.exe":                           "invoicefdp.exe",
		`C:\Users\x\report.pdf`:                          "report.pdf",
		"=?x-unknown?q?=2E=2E=2Fy?=":                     "=?x-unknown?q?=2E=2E=2Fy?=",
	}
	call = smallCall()
	call.Message.FromName = names[0]
	call.Message.ReplyToName, call.Message.ReplyToEmail = names[2], "help@shop.example.com"
	for i, n := range names {
		call.Recipients = append(call.Recipients, postroom.Recipient{Email: fmt.Sprintf("r%d@example.com", i), Name: n})
	}
	for _, name := range slices.Sorted(maps.Keys(files)) {
		call.Message.Attachments = append(call.Message.Attachments, postroom.Attachment{Name: name, ContentType: "text/plain", Content: base64.StdEncoding.EncodeToString([]byte("x"))})
	}
	return call, names, files
}

// TestLookAlikes sends display names and file names that look like
// encoded words or paths, reads the messages back as net/mail and
// mime.WordDecoder do, and checks that each decodes to the literal name
// given, with the envelope's address, and each file name to a base name.
func TestLookAlikes(t *testing.T) {
	call, names, files := lookAlikeCall()
	mem := transport.NewMemory()
	results, err := newMailer(t, mem, postroom.Options{}).Send(t.Context(), call)
	if err != nil {
		t.Fatal(err)
	}
	wantFiles := slices.Sorted(maps.Values(files))
	for i, r := range results {
		if r.Status != postroom.StatusSent {
			t.Fatalf("result %d = %+v", i, r)
		}
		env, _ := mem.Envelope(r.SendID)
		msg := mailtest.Parse(t, env.Data)
		for field, want := range map[string]mail.Address{
			"To":       {Name: names[i], Address: env.To[0]},
			"From":     {Name: call.Message.FromName, Address: env.From},
			"Reply-To": {Name: call.Message.ReplyToName, Address: call.Message.ReplyToEmail},
		} {
			list, err := msg.Header.AddressList(field)
			if err != nil || len(list) != 1 || list[0].Name != want.Name || list[0].Address != want.Address {
				t.Errorf("%s %q reads as %v (%v), want one address %q <%s>", field, msg.Header.Get(field), list, err, want.Name, want.Address)
			}
			// A reader that decodes every encoded word of the field, even
			// in a quoted string, still sees the literal name.
			if got := mailtest.DecodeHeader(t, msg.Header.Get(field)); !strings.Contains(got, want.Name) {
				t.Errorf("%s %q decodes to %q, which lacks the literal name %q", field, msg.Header.Get(field), got, want.Name)
			}
		}
		var got []string
		for _, p := range msg.Parts {
			d, params, err := mime.ParseMediaType(p.Header.Get("Content-Disposition"))
			if err != nil || d != "attachment" {
				continue
			}
			name := params["filename"]
			if !strings.HasPrefix(name, "=?x-unknown?") { // which mime.WordDecoder cannot decode
				name = mailtest.DecodeHeader(t, name)
			}
			got = append(got, name)
		}
		slices.Sort(got)
		if !slices.Equal(got, wantFiles) {
			t.Errorf("file names read back as %q, want %q", got, wantFiles)
		}
	}
}

// TestLookAlikesPython reads the messages of TestLookAlikes with Python's
// email package, a reader that decodes encoded words where RFC 2047 says
// not to.
func TestLookAlikesPython(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("python3 is needed under CI: %v", err)
		}
		t.Skipf("python3 is not installed (apt-get install python3): %v", err)
	}
	const script = `
import base64, email, email.policy, json, sys
res = []
for data in json.load(sys.stdin):
    msg = email.message_from_bytes(base64.b64decode(data), policy=email.policy.default)
    out = {}
    for f in ("To", "From", "Reply-To"):
        out[f] = [[x.display_name, x.addr_spec] for x in msg[f].addresses]
    out["files"] = sorted(p.get_filename() for p in msg.iter_attachments())
    res.append(out)
json.dump(res, sys.stdout)
`
	call, names, files := lookAlikeCall()
	mem := transport.NewMemory()
	results, err := newMailer(t, mem, postroom.Options{}).Send(t.Context(), call)
	if err != nil {
		t.Fatal(err)
	}
	var msgs [][]byte // encoding/json writes them as base64
	var envs []postroom.Envelope
	for _, r := range results {
		env, _ := mem.Envelope(r.SendID)
		envs = append(envs, env)
		msgs = append(msgs, env.Data)
	}
	in, _ := json.Marshal(msgs)
	cmd := exec.CommandContext(t.Context(), python, "-c", script)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3: %v\n%s", err, stderr.Bytes())
	}
	var read []struct {
		To      [][2]string `json:"To"`
		From    [][2]string `json:"From"`
		ReplyTo [][2]string `json:"Reply-To"`
		Files   []string    `json:"files"`
	}
	if err := json.Unmarshal(out, &read); err != nil || len(read) != len(results) {
		t.Fatalf("python3 output %s: %v", out, err)
	}
	wantFiles := slices.Sorted(maps.Values(files))
	for i, got := range read {
		env := envs[i]
		for field, tc := range map[string]struct {
			got  [][2]string
			want [2]string
		}{
			"To":       {got.To, [2]string{names[i], env.To[0]}},
			"From":     {got.From, [2]string{call.Message.FromName, env.From}},
			"Reply-To": {got.ReplyTo, [2]string{call.Message.ReplyToName, call.Message.ReplyToEmail}},
		} {
			// Python keeps the white space between adjacent encoded words
			// of a display name, which RFC 2047 §6.2 says to drop: a long
			// name, written as several words, reads back with spaces added.
			if len(tc.got) != 1 || tc.got[0][1] != tc.want[1] || noSpace(tc.got[0][0]) != noSpace(tc.want[0]) {
				t.Errorf("recipient %d: Python reads %s as %q, want %q", i, field, tc.got, tc.want)
			}
		}
		if !slices.Equal(got.Files, wantFiles) {
			t.Errorf("recipient %d: Python reads the file names as %q, want %q", i, got.Files, wantFiles)
		}
	}
}

func noSpace(s string) string { return strings.Join(strings.Fields(s), "") }

// TestMessageBudgetBoundsMemory: 8 recipients whose subject, html, text and
// one header would each render 8 MiB (within MaxRenderBytes) under a 1 MiB
// message limit. Their parts together are checked against the limit while
// they render, so the call allocates a small multiple of the limit, not
// the 32 MiB per recipient the parts would render to (plus three times
// that in reserved message buffer).
func TestMessageBudgetBoundsMemory(t *testing.T) {
	const limit = 1 << 20
	const eightMiB = "{{#each parts}}{{this}}{{/each}}" // few tokens: compiling allocates little
	call := smallCall()
	call.Message.Subject, call.Message.HTML, call.Message.Text = eightMiB, eightMiB, eightMiB
	call.Message.Headers = []postroom.Header{{Name: "X-Big", Value: eightMiB}}
	parts := make([]any, 128) // 128 × 64 KiB
	for i := range parts {
		parts[i] = strings.Repeat("words of 64 KiB ", 4<<10)
	}
	params := map[string]any{"parts": parts}
	for i := range 8 {
		call.Recipients = append(call.Recipients, postroom.Recipient{Email: fmt.Sprintf("u%d@example.com", i), Params: params})
	}
	mem := transport.NewMemory()
	m := newMailer(t, mem, postroom.Options{Concurrency: 1, MaxMessageBytes: limit})
	var results []postroom.Result
	var err error
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	results, err = m.Send(t.Context(), call)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		if r.Status != postroom.StatusInvalid || r.Code != postroom.ReasonMessageTooLarge {
			t.Fatalf("result %+v, want invalid, %s", r, postroom.ReasonMessageTooLarge)
		}
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 4*limit {
		t.Errorf("the call allocated %d bytes, want at most 4 × MaxMessageBytes (%d)", n, 4*limit)
	}
}

// countdownCtx is a context whose Err turns context.Canceled after its
// first n calls: a deadline passing mid-call, without timing.
type countdownCtx struct {
	context.Context
	n, calls atomic.Int64
}

func (c *countdownCtx) Err() error {
	if c.calls.Add(1) > c.n.Load() {
		return context.Canceled
	}
	return nil
}

// TestCancelWhileRendering: a recipient whose html takes 100 million steps
// (MaxRenderSteps allows them) under a context that is done after a few
// dozen checks. The render checks ctx as it goes: the call returns ctx's
// error with the recipient deferred, a few checks after ctx is done, not
// after the 100,000 checks the whole render would make.
func TestCancelWhileRendering(t *testing.T) {
	big := make([]any, 10_000)
	for i := range big {
		big[i] = float64(i)
	}
	call := smallCall("a@example.com")
	call.Message.HTML = "{{#each big}}{{#each ../big}}{{/each}}{{/each}}"
	call.Recipients[0].Params = map[string]any{"big": big}
	mem := transport.NewMemory()
	m := newMailer(t, mem, postroom.Options{MaxRenderSteps: 1 << 40})
	ctx := &countdownCtx{Context: t.Context()}
	ctx.n.Store(30)
	results, err := m.Send(ctx, call)
	if !errors.Is(err, context.Canceled) || len(results) != 1 {
		t.Fatalf("Send = %+v, %v; want one result and context.Canceled", results, err)
	}
	if r := results[0]; r.Status != postroom.StatusDeferred || r.Code != postroom.ReasonCanceled {
		t.Errorf("result %+v, want deferred, %s", r, postroom.ReasonCanceled)
	}
	if calls := ctx.calls.Load(); calls > ctx.n.Load()+10 || mem.Len() != 0 {
		t.Errorf("ctx checked %d times after it was done after %d; %d messages sent", calls, ctx.n.Load(), mem.Len())
	}
}
