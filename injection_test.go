package postroom_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"mime"
	"net/mail"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/testkit/testenv"
	"github.com/postroom/postroom/postroomtest"
	"github.com/postroom/postroom/transport"
)

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
				p := postroomtest.Parse(t, env.Data)
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
		msg := postroomtest.Parse(t, env.Data)
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
			if got := msg.HeaderValue(field); !strings.Contains(got, want.Name) {
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
				var err error
				if name, err = new(mime.WordDecoder).DecodeHeader(name); err != nil {
					t.Fatalf("attachment name %q: %v", params["filename"], err)
				}
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
	// Its time goes to programs it runs: it waits beside the package's
	// other tests that run programs.
	t.Parallel()
	testenv.Need(t, "python3", "python3", "-V")
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
	cmd := exec.CommandContext(t.Context(), "python3", "-c", script)
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
