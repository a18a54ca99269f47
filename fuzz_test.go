package postroom

// Fuzz targets for the invariants the root package promises, each checked
// against an independent reader: net/mail for addresses, encoding/json for
// call bodies, and internal/testkit/mimeread (net/mail, mime/multipart) for the
// messages a Mailer writes.

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/mail"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"golang.org/x/net/idna"

	"github.com/postroom/postroom/internal/mimemsg"
	"github.com/postroom/postroom/internal/testkit/mimeread"
	"github.com/postroom/postroom/internal/testkit/workload"
)

// FuzzParseAddress: whatever parseAddress accepts, net/mail.ParseAddress
// accepts too, as a bare address with no display name, splitting it at the
// same '@' with the same local part and a domain that is the same once in
// lower-case A-label form (parseAddress returns it so).
//
// The reverse does not hold, on purpose: parseAddress refuses what net/mail
// takes for a display name, a comment, a quoted local part, a domain
// literal, a UTF-8 local part (RFC 6531 would need SMTPUTF8 at every hop), a
// domain without a dot, a domain that is not valid UTF-8, a label with
// hyphens in its third and fourth places that is not a valid A-label
// (RFC 5891 §4.2.3.1), a local part holding "=?" (an RFC 2047 encoded-word
// look-alike, which some readers decode into another address), and lines
// that end in CR or LF. Apart from those,
// an ASCII dot-atom local part at an LDH domain with a dot, within the RFC
// 5321 lengths, is accepted: checked below for what net/mail accepts.
func FuzzParseAddress(f *testing.F) {
	for _, s := range []string{
		"user@example.com", "User.Name@Example.COM", "a!#$%&'*+-/=?^_`{|}~@example.com",
		"hans@bücher.example", "a@mail.eu.example.co.uk", "", "user.example.com", "@example.com",
		`"john doe"@example.com`, "user(comment)@example.com", "user@[192.0.2.1]",
		"Bob <bob@example.com>", ".user@example.com", "us..er@example.com", "a@b@example.com",
		"zoë@example.com", "root@localhost", "a@-x.example.com", "a@x_y.example.com",
		"a@example.com\r", "a@example.com\nBcc: evil@example.com", "a\x00b@example.com",
		"=?utf-8?q?a?=@example.com", "a@ｅxample.com", "a@example。com", "a@example.com.",
		"a@xn--bcher-kva.example", "a@example\xff.com", "0@00--0.0", strings.Repeat("a", 64) + "@example.com",
		strings.Repeat("a", 64) + "@" + strings.Repeat(strings.Repeat("b", 60)+".", 4) + "com",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, problem := parseAddress(s)
		parsed, mailErr := mail.ParseAddress(s)
		if problem != "" {
			if got != "" {
				t.Fatalf("parseAddress(%q) = %q with problem %q", s, got, problem)
			}
			if mailErr == nil && parsed.Name == "" && parsed.Address == s && plainAddress(s) {
				t.Fatalf("parseAddress(%q) refused a plain ASCII address net/mail accepts: %s", s, problem)
			}
			return
		}
		if mailErr != nil {
			t.Fatalf("parseAddress(%q) = %q, but net/mail refuses it: %v", s, got, mailErr)
		}
		if parsed.Name != "" {
			t.Fatalf("parseAddress(%q) accepted what net/mail reads as display name %q", s, parsed.Name)
		}
		local, domain, _ := cutLast(parsed.Address, "@")
		gotLocal, gotDomain, _ := cutLast(got, "@")
		if local != gotLocal {
			t.Fatalf("parseAddress(%q): local part %q, net/mail's %q", s, gotLocal, local)
		}
		ascii, err := idna.Lookup.ToASCII(domain)
		if err != nil || strings.ToLower(ascii) != gotDomain {
			t.Fatalf("parseAddress(%q): domain %q, net/mail's %q (A-label %q, %v)", s, gotDomain, domain, ascii, err)
		}
		if len(got) > maxPath || strings.ContainsAny(got, "\r\n\x00 ") {
			t.Fatalf("parseAddress(%q) = %q: not fit for an SMTP path", s, got)
		}
	})
}

// plainAddress reports whether s is an ASCII dot-atom, '@', and a lower- or
// upper-case LDH domain of at least two labels, within the RFC 5321 lengths:
// the addresses parseAddress must accept.
func plainAddress(s string) bool {
	local, domain, ok := cutLast(s, "@")
	if !ok || len(local) > maxLocalPart || len(s) > maxPath || !mimemsg.IsDotAtom(local) || strings.Contains(local, "=?") {
		return false
	}
	if checkHostname(strings.ToLower(domain)) != "" {
		return false
	}
	for l := range strings.SplitSeq(domain, ".") {
		if len(l) >= 4 && l[2:4] == "--" {
			return false // reserved for IDNA (RFC 5891 §4.2.3.1): idna checks "xn--" labels, refuses others
		}
	}
	return true
}

func cutLast(s, sep string) (before, after string, found bool) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+len(sep):], true
}

// FuzzDecodeCallRoundTrip: DecodeCall never panics; a body it accepts
// re-encodes with encoding/json to a body it accepts again, decoded to an
// equal Call; a body it refuses is refused with an error wrapping
// ErrInvalidJSON that is either *ValidationError values naming the field
// (ValidationErrors non-empty) or, for a body that is not JSON at all,
// encoding/json's syntax error. One exception is known and allowed: a
// number in params beyond float64's range is valid JSON that
// encoding/json refuses with an *json.UnmarshalTypeError.
func FuzzDecodeCallRoundTrip(f *testing.F) {
	f.Add(workload.Read(f))
	for _, s := range []string{
		`{}`, `null`, `[]`, `"x"`, `{"message":{"htmll":1}}`, `{"recipients":[{"email":"a","params":{"x":[1]}}]}`,
		`{"global_params":{"a":1e400}}`, `{"message":{"headers":[{"name":"a"}],"images":[{}]}}`,
		`{"Key":"a"}`, `{"key":"a","key":"b"}`, `{"key":"a"} {}`, `{"key":"\ud800"}`, `{"key":"\u0000"}`,
		`{"recipients":null,"message":null,"global_params":{"a":{"b":[null,true,-0,1e-320]}}}`,
		`{"recipients":[],"message":{"headers":[],"attachments":null}}`, "{\"key\":\"\xff\"}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		call, err := DecodeCall(data)
		if err != nil {
			if call != nil {
				t.Fatalf("DecodeCall(%q) returned a Call with error %v", data, err)
			}
			if !errors.Is(err, ErrInvalidJSON) {
				t.Fatalf("DecodeCall(%q): %v does not wrap ErrInvalidJSON", data, err)
			}
			var syntax *json.SyntaxError
			switch {
			case ValidationErrors(unwrapInvalidJSON(err)) != nil:
			case !json.Valid(data) && (errors.As(err, &syntax) || errors.Is(err, io.ErrUnexpectedEOF)):
			default:
				t.Fatalf("DecodeCall(%q) refused it with %v (%T): neither a ValidationError nor a JSON syntax error", data, err, err)
			}
			return
		}
		again, err := json.Marshal(call)
		if err != nil {
			t.Fatalf("encoding/json cannot encode the Call DecodeCall made of %q: %v", data, err)
		}
		call2, err := DecodeCall(again)
		if err != nil {
			t.Fatalf("DecodeCall refused the re-encoding %s of %q: %v", again, data, err)
		}
		if !reflect.DeepEqual(call, call2) {
			t.Fatalf("%q decodes to %+v, its re-encoding %s to %+v", data, call, again, call2)
		}
	})
}

// unwrapInvalidJSON returns the error DecodeCall wrapped together with
// ErrInvalidJSON, or err itself when it is not such a pair.
func unwrapInvalidJSON(err error) error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		if errs := j.Unwrap(); len(errs) == 2 && errs[0] == ErrInvalidJSON {
			return errs[1]
		}
	}
	return err
}

// fuzzPNG is the content of the message round trip's inline image.
var fuzzPNG = []byte("\x89PNG\r\n\x1a\nnot really a png")

// FuzzMessageRoundTrip sends one recipient a message made of fuzzed subject,
// display names, custom header value, file names, html and text, through a
// Mailer and a recording transport. When the recipient is sent, the message
// reads back with internal/testkit/mimeread (line rules, net/mail, mime/multipart)
// to the tree its parts call for; the subject, the custom header, From and
// To decode to the input; the bodies and file names come back as given
// (line breaks as CRLF, file names as safeFileName makes them); and the
// header has exactly the expected fields, once each: no field of the input
// leaks out as a header of its own. When it is not sent, it is refused
// honestly: a call-level *ValidationError, or a result invalid with one of
// the reasons for content.
//
// The fuzzed values reach the templates as parameters through triple
// stashes ({{{subject}}}), so that they are taken literally, braces
// included.
func FuzzMessageRoundTrip(f *testing.F) {
	type seed struct {
		parts                                                     uint8 // 1 text, 2 html, 4 image, 8 attachment
		subject, fromName, toName, value, image, file, html, text string
	}
	for _, s := range []seed{
		{1, "hello", "Sender", "Rcpt", "<https://x.example/u>", "", "", "", "hi"},
		{15, "Grüße =?utf-8?q?x?= _", "Zoë, \"Z\"", "O'Brien (work)", "ü\t=?", "logo.png", "report.pdf", "<p>Hi</p>", "Hi\n.\nbye"},
		{3, "Eve\r\nBcc: evil@example.com", "x\nBcc: e@example.com", "Eve\r\nBcc: evil@example.com", "1\r\nBcc: e@example.com", "", "", "a\rb", "a\r\nb"},
		{10, strings.Repeat("lorem ", 200), strings.Repeat("Ørsted ", 30), "", strings.Repeat("x", 500), "", "../../etc/passwd", strings.Repeat("<b>", 400), ""},
		{14, "{{x}} \\{{y}}", "{{name}}", "\"quoted\"", "tab\there", "a/b\\c\".png", "\u202ereport\u202c.exe", "<img src=\"cid:other\">", ""},
		{9, "\xff\xfe", "\xc3", "", "=?utf-8?b?QmNjOiBl?=", "", strings.Repeat("ü", 300) + ".txt", "", "=\r\n=3D\n"},
	} {
		f.Add(s.parts, s.subject, s.fromName, s.toName, s.value, s.image, s.file, s.html, s.text)
	}
	f.Fuzz(func(t *testing.T, parts uint8, subject, fromName, toName, value, image, file, html, text string) {
		hasText, hasHTML := parts&1 != 0, parts&2 != 0
		hasImage, hasFile := hasHTML && parts&4 != 0, parts&8 != 0
		if !hasText && !hasHTML {
			hasText = true
		}
		call := &Call{
			Message: Message{
				FromEmail: "sender@example.com", FromName: fromName,
				Subject: "{{{subject}}}",
				Headers: []Header{{Name: "X-Fuzz", Value: "{{{value}}}"}},
			},
			Recipients: []Recipient{{Email: "rcpt@example.org", Name: toName, Params: map[string]any{
				"subject": subject, "value": value, "html": html, "text": text,
			}}},
		}
		if hasText {
			call.Message.Text = "{{{text}}}"
		}
		if hasHTML {
			call.Message.HTML = "{{{html}}}"
		}
		if hasImage {
			call.Message.HTML += `<img src="cid:logo@fuzz">`
			call.Message.Images = []Image{{Name: image, CID: "logo@fuzz", ContentType: "image/png", Content: base64.StdEncoding.EncodeToString(fuzzPNG)}}
		}
		if hasFile {
			call.Message.Attachments = []Attachment{{Name: file, ContentType: "application/pdf", Content: base64.StdEncoding.EncodeToString([]byte(text))}}
		}

		var rec fuzzRecorder
		m, err := New(&rec, Options{Auth: NoAuth{}, HTMLOnly: true, Now: func() time.Time { return time.Unix(1700000000, 0) }})
		if err != nil {
			t.Fatal(err)
		}
		results, err := m.Send(t.Context(), call)
		if err != nil {
			if ValidationErrors(err) == nil {
				t.Fatalf("Send refused the call with %v, not with ValidationErrors", err)
			}
			if len(rec.msgs) != 0 {
				t.Fatalf("Send refused the call (%v) after handing over %d messages", err, len(rec.msgs))
			}
			return
		}
		if len(results) != 1 {
			t.Fatalf("%d results for one recipient", len(results))
		}
		if r := results[0]; r.Status != StatusSent {
			if r.Status != StatusInvalid || !slices.Contains([]ReasonCode{ReasonInvalidEmail, ReasonHeaderInjection, ReasonRenderError, ReasonMessageTooLarge, ReasonMissingParam}, r.Code) {
				t.Fatalf("result %+v: neither sent nor refused for its content", r)
			}
			if len(rec.msgs) != 0 {
				t.Fatalf("result %+v, but the transport got %d messages", r, len(rec.msgs))
			}
			return
		}
		if len(rec.msgs) != 1 {
			t.Fatalf("sent, but the transport got %d messages", len(rec.msgs))
		}
		msg := mimeread.Parse(t, rec.msgs[0])

		htmlTree := "text/html"
		if hasImage {
			htmlTree = "related(text/html,image/png)"
		}
		tree := htmlTree
		switch {
		case hasText && hasHTML:
			tree = "alternative(text/plain," + htmlTree + ")"
		case hasText:
			tree = "text/plain"
		}
		if hasFile {
			tree = "mixed(" + tree + ",application/pdf)"
		}
		if msg.Tree != tree {
			t.Fatalf("tree %s, want %s", msg.Tree, tree)
		}

		want := []string{"From", "To", "Subject", "Date", "Message-ID", "MIME-Version", "X-Fuzz", "Content-Type"}
		if !strings.HasPrefix(tree, "multipart") && !strings.Contains(tree, "(") {
			want = append(want, "Content-Transfer-Encoding")
		}
		if !slices.Equal(msg.Keys, want) {
			t.Fatalf("header fields %q, want %q", msg.Keys, want)
		}
		head, _, _ := bytes.Cut(rec.msgs[0], []byte("\r\n\r\n"))
		for field, want := range map[string]string{"Subject": subject, "X-Fuzz": value} {
			if got := mimeread.DecodeHeader(t, fuzzRawField(string(head), field)); got != want {
				t.Errorf("%s decodes to %q, want %q", field, got, want)
			}
		}
		for field, want := range map[string]mail.Address{"From": {Name: fromName, Address: "sender@example.com"}, "To": {Name: toName, Address: "rcpt@example.org"}} {
			got, err := msg.Header.AddressList(field)
			if err != nil || len(got) != 1 || *got[0] != want {
				t.Errorf("%s: %v (%v), want %q <%s>", field, got, err, want.Name, want.Address)
			}
		}

		// The mimeread Paths of the leaves: mixed, then alternative, then
		// related, as far as the message has them.
		var outer, related []string
		if hasFile {
			outer = append(outer, "multipart/mixed")
		}
		if hasText && hasHTML {
			outer = append(outer, "multipart/alternative")
		}
		if hasImage {
			related = append(slices.Clone(outer), "multipart/related")
		} else {
			related = outer
		}
		leaf := func(parents []string, mt string) string { return strings.Join(append(slices.Clone(parents), mt), ">") }
		crlf := func(s string) string {
			return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\n", "\r\n")
		}
		if hasText {
			if got := string(msg.Find(t, leaf(outer, "text/plain")).Body); got != crlf(text) {
				t.Errorf("text body %q, want %q", got, crlf(text))
			}
		}
		if hasHTML {
			wantHTML := html
			if hasImage {
				wantHTML += `<img src="cid:logo@fuzz">`
			}
			if got := string(msg.Find(t, leaf(related, "text/html")).Body); got != crlf(wantHTML) {
				t.Errorf("html body %q, want %q", got, crlf(wantHTML))
			}
		}
		if hasImage {
			p := msg.Find(t, leaf(related, "image/png"))
			fuzzCheckFile(t, p, "inline", mimemsg.SafeFileName(image, "image"), fuzzPNG)
		}
		if hasFile {
			p := msg.Find(t, leaf(outer[:min(len(outer), 1)], "application/pdf"))
			fuzzCheckFile(t, p, "attachment", mimemsg.SafeFileName(file, "attachment"), []byte(text))
		}
	})
}

// fuzzRecorder is a Transport that keeps a copy of every message.
type fuzzRecorder struct {
	mu   sync.Mutex
	msgs [][]byte
}

func (r *fuzzRecorder) Send(_ context.Context, env *Envelope) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, bytes.Clone(env.Data))
	return nil
}

// fuzzRawField returns the value of the top-level field name in head,
// unfolded (CRLF before white space removed) and without the one space
// after the colon.
func fuzzRawField(head, name string) string {
	var b strings.Builder
	in := false
	for _, l := range strings.Split(head, "\r\n") {
		switch {
		case l != "" && (l[0] == ' ' || l[0] == '\t'):
			if in {
				b.WriteString(l)
			}
		default:
			n, v, _ := strings.Cut(l, ":")
			in = strings.EqualFold(n, name)
			if in {
				b.WriteString(v)
			}
		}
	}
	return strings.TrimPrefix(b.String(), " ")
}

// fuzzCheckFile checks an image or attachment part read back: its
// disposition, its file name in both places, and its content.
func fuzzCheckFile(t *testing.T, p mimeread.Part, disposition, name string, content []byte) {
	t.Helper()
	d, params, err := mime.ParseMediaType(p.Header.Get("Content-Disposition"))
	if err != nil || d != disposition || params["filename"] != name {
		t.Errorf("%s: Content-Disposition %q (%v), want %s with filename %q", p.Path, p.Header.Get("Content-Disposition"), err, disposition, name)
	}
	_, params, err = mime.ParseMediaType(p.Header.Get("Content-Type"))
	if err != nil || params["name"] != name {
		t.Errorf("%s: Content-Type %q (%v), want name %q", p.Path, p.Header.Get("Content-Type"), err, name)
	}
	if !bytes.Equal(p.Body, content) {
		t.Errorf("%s: content %q, want %q", p.Path, p.Body, content)
	}
	if !utf8.ValidString(name) {
		t.Errorf("%s: file name %q is not UTF-8", p.Path, name)
	}
}
