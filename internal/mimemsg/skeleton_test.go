package mimemsg

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"mime"
	"net/mail"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/postroom/postroom/internal/testkit/mimeread"
)

// mimeSeededRand is a deterministic random source for boundaries.
func mimeSeededRand(seed byte) io.Reader {
	var s [32]byte
	s[0] = seed
	return rand.NewChaCha8(s)
}

// mimeParse parses data back with mimeread (net/mail and mime/multipart),
// which checks its lines (CRLF only, at most 998 octets, 7-bit, no NUL)
// and leaf encodings, and checks what postroom's messages promise besides
// (mimeread's CheckPostroom).
func mimeParse(t *testing.T, data []byte) *mimeread.Message {
	t.Helper()
	m := mimeread.Parse(t, data)
	m.CheckPostroom(t)
	return m
}

// mimeTestParts says which parts a test layout has.
type mimeTestParts struct {
	Text, HTML          bool
	Images, Attachments int
}

// mimeTestLayout is a layout with the given parts, one static and one
// dynamic custom header.
func mimeTestLayout(parts mimeTestParts) *Layout {
	l := &Layout{
		FromName: "Example Shop", FromAddr: "orders@shop.example.com",
		Date:    time.Date(2024, 5, 6, 7, 8, 9, 0, time.FixedZone("", 2*3600)),
		Headers: []Header{{Name: "X-Campaign-ID", Value: "spring"}, {Name: "List-Unsubscribe", Dynamic: true}},
		HasText: parts.Text, HasHTML: parts.HTML,
	}
	for i := range parts.Images {
		l.Images = append(l.Images, File{
			Name: fmt.Sprintf("img%d.png", i), CID: fmt.Sprintf("img%d@example", i),
			ContentType: "image/png", Data: bytes.Repeat([]byte{byte(i), 0x89, 'P', 0xff}, 100+i),
		})
	}
	for i := range parts.Attachments {
		l.Attachments = append(l.Attachments, File{
			Name: fmt.Sprintf("doc%d.pdf", i), ContentType: "application/pdf",
			Data: bytes.Repeat([]byte{'%', byte(i), 0xfe}, 1000+i),
		})
	}
	return l
}

func mimeTestVarying() *Varying {
	return &Varying{
		ToName: "Alice Example", ToAddr: "alice@example.org",
		Subject:      "Your order is confirmed",
		MessageID:    "<0123456789abcdef0123456789abcdef@shop.example.com>",
		HeaderValues: []string{"<https://shop.example.com/u?id=1>"},
		Text:         []byte("Hi Alice,\r\n\r\nline = two\r\ntrailing space \r\n"),
		HTML:         []byte("<p style=\"color: red\">Zoë &amp; café</p>\r\n<img src=\"cid:img0@example\">"),
	}
}

func mimeBuild(t *testing.T, l *Layout, v *Varying) []byte {
	t.Helper()
	sk, err := New(l, mimeSeededRand(1))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	msg, err := sk.Append(nil, v)
	if err != nil {
		t.Fatalf("Append: %v", err)
	}
	return msg
}

func TestMIMELayouts(t *testing.T) {
	tests := []struct {
		name                string
		text, html          bool
		images, attachments int
		shape               string
		single              string // the top media type of a single-part message
	}{
		{"text", true, false, 0, 0, "text/plain", "text/plain"},
		{"html", false, true, 0, 0, "text/html", "text/html"},
		{"text+html", true, true, 0, 0, "alternative(text/plain,text/html)", ""},
		{"html+images", false, true, 2, 0, "related(text/html,image/png,image/png)", ""},
		{"text+html+images", true, true, 2, 0, "alternative(text/plain,related(text/html,image/png,image/png))", ""},
		{"text+attachments", true, false, 0, 2, "mixed(text/plain,application/pdf,application/pdf)", ""},
		{"html+attachments", false, true, 0, 1, "mixed(text/html,application/pdf)", ""},
		{"text+html+attachments", true, true, 0, 1, "mixed(alternative(text/plain,text/html),application/pdf)", ""},
		{"html+images+attachments", false, true, 1, 1, "mixed(related(text/html,image/png),application/pdf)", ""},
		{"text+html+images+attachments", true, true, 2, 2, "mixed(alternative(text/plain,related(text/html,image/png,image/png)),application/pdf,application/pdf)", ""},
		{"text ignores images", true, false, 2, 0, "text/plain", "text/plain"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := mimeTestLayout(mimeTestParts{Text: tt.text, HTML: tt.html, Images: tt.images, Attachments: tt.attachments})
			v := mimeTestVarying()
			p := mimeParse(t, mimeBuild(t, l, v))

			if p.Tree != tt.shape {
				t.Errorf("tree %s, want %s", p.Tree, tt.shape)
			}
			want := []string{"From", "To", "Subject", "Date", "Message-ID", "MIME-Version", "X-Campaign-ID", "List-Unsubscribe", "Content-Type"}
			if tt.single != "" {
				want = append(want, "Content-Transfer-Encoding")
			}
			if !slices.Equal(p.Keys, want) {
				t.Errorf("header fields %q, want %q", p.Keys, want)
			}
			for field, value := range map[string]string{
				"From":             `"Example Shop" <orders@shop.example.com>`,
				"To":               `"Alice Example" <alice@example.org>`,
				"Subject":          v.Subject,
				"Date":             "Mon, 06 May 2024 07:08:09 +0200",
				"Message-ID":       v.MessageID,
				"MIME-Version":     "1.0",
				"X-Campaign-ID":    "spring",
				"List-Unsubscribe": v.HeaderValues[0],
			} {
				if got := p.Header.Get(field); got != value {
					t.Errorf("%s: %q, want %q", field, got, value)
				}
			}
			if tt.text {
				leaf := p.Leaf(t, "text/plain")
				if !bytes.Equal(leaf.Body, v.Text) {
					t.Errorf("text body %q, want %q", leaf.Body, v.Text)
				}
				if leaf.Param("charset") != "UTF-8" {
					t.Errorf("text charset %q", leaf.Param("charset"))
				}
			}
			if tt.html {
				leaf := p.Leaf(t, "text/html")
				if !bytes.Equal(leaf.Body, v.HTML) {
					t.Errorf("html body %q, want %q", leaf.Body, v.HTML)
				}
				if leaf.Param("charset") != "UTF-8" {
					t.Errorf("html charset %q", leaf.Param("charset"))
				}
			}
			var images, attachments int
			for _, leaf := range p.Parts {
				switch leaf.Type() {
				case "image/png":
					img := l.Images[images]
					images++
					if leaf.Parent() != "multipart/related" {
						t.Errorf("image inside %q, want multipart/related", leaf.Parent())
					}
					if got := leaf.Header.Get("Content-ID"); got != "<"+img.CID+">" {
						t.Errorf("Content-ID %q, want <%s>", got, img.CID)
					}
					mimeCheckFile(t, leaf, img, "inline", img.Name)
				case "application/pdf":
					att := l.Attachments[attachments]
					attachments++
					if leaf.Parent() != "multipart/mixed" {
						t.Errorf("attachment inside %q, want multipart/mixed", leaf.Parent())
					}
					mimeCheckFile(t, leaf, att, "attachment", att.Name)
				}
			}
			if tt.html && images != tt.images || attachments != tt.attachments {
				t.Errorf("found %d images and %d attachments, want %d and %d", images, attachments, tt.images, tt.attachments)
			}
		})
	}
}

// mimeCheckFile checks a file part's disposition, names and content.
func mimeCheckFile(t *testing.T, leaf mimeread.Part, f File, disposition, name string) {
	t.Helper()
	if !bytes.Equal(leaf.Body, f.Data) {
		t.Errorf("%s: content differs (%d octets, want %d)", f.Name, len(leaf.Body), len(f.Data))
	}
	if leaf.Param("name") != name {
		t.Errorf("Content-Type name %q, want %q", leaf.Param("name"), name)
	}
	d, params, err := mime.ParseMediaType(leaf.Header.Get("Content-Disposition"))
	if err != nil {
		t.Fatalf("Content-Disposition %q: %v", leaf.Header.Get("Content-Disposition"), err)
	}
	if d != disposition || params["filename"] != name {
		t.Errorf("Content-Disposition %s filename %q, want %s filename %q", d, params["filename"], disposition, name)
	}
	// A reader that decodes RFC 2047 in parameters, against the RFC, still
	// gets the literal name: a base name with nothing hidden in it.
	for _, v := range []string{leaf.Param("name"), params["filename"]} {
		got, err := new(mime.WordDecoder).DecodeHeader(v)
		if err == nil && got != name {
			t.Errorf("file name %q decodes as RFC 2047 to %q, want %q", v, got, name)
		}
		if strings.ContainsAny(got, `/\`) || strings.ContainsFunc(got, func(r rune) bool { return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) }) {
			t.Errorf("file name %q decodes to %q: a path, a control or a format character", v, got)
		}
	}
}

func TestMIMEReplyTo(t *testing.T) {
	l := mimeTestLayout(mimeTestParts{Text: true})
	l.ReplyToName, l.ReplyToAddr = "Support, Team", "help@shop.example.com"
	p := mimeParse(t, mimeBuild(t, l, mimeTestVarying()))
	want := []string{"From", "To", "Reply-To", "Subject", "Date", "Message-ID", "MIME-Version", "X-Campaign-ID", "List-Unsubscribe", "Content-Type", "Content-Transfer-Encoding"}
	if !slices.Equal(p.Keys, want) {
		t.Fatalf("header fields %q, want %q", p.Keys, want)
	}
	addr, err := mail.ParseAddress(p.Header.Get("Reply-To"))
	if err != nil {
		t.Fatalf("Reply-To %q: %v", p.Header.Get("Reply-To"), err)
	}
	if addr.Name != l.ReplyToName || addr.Address != l.ReplyToAddr {
		t.Errorf("Reply-To %+v, want %q <%s>", addr, l.ReplyToName, l.ReplyToAddr)
	}
}

// mimeUnfold returns a raw header value with its folds removed (RFC 5322
// §2.2.3), checking that it was folded only before white space.
func mimeUnfold(t *testing.T, raw string) string {
	t.Helper()
	for _, l := range strings.Split(raw, "\r\n")[1:] {
		if l == "" || (l[0] != ' ' && l[0] != '\t') || strings.TrimLeft(l, " \t") == "" {
			t.Fatalf("bad folded line %q", l)
		}
	}
	return strings.ReplaceAll(raw, "\r\n", "")
}

func TestMIMEHeaderEncoding(t *testing.T) {
	long := strings.Repeat("word ", 60) + "end"
	tests := []struct {
		name                 string
		toName, subject, dyn string
		static               string
		fromName             string
	}{
		{name: "ascii", toName: "Alice Example", subject: "Hello", dyn: "<https://x.example/u>", static: "spring", fromName: "Shop"},
		{name: "non-ascii", toName: "Zoë Ørsted", subject: "Bestätigung für Zoë", dyn: "ünïcödé", static: "café", fromName: "Boutique Élise"},
		{name: "mostly non-ascii", toName: "東京 太郎", subject: "ご注文ありがとうございます", dyn: "価格", static: "日本", fromName: "ショップ"},
		{name: "specials", toName: `O'Brien, Ana "Ann" <x>`, subject: `Tom & Jerry = "friends"? yes_no`, dyn: "a=b?c_d", static: "x;y", fromName: `Shop, "Best" Inc.`},
		{name: "non-ascii specials", toName: `Zoë, "Z"`, subject: "=?utf-8?q?not_an_encoded_word?= ü", dyn: "ü=?", static: "ß_", fromName: "Élise (shop)"},
		{name: "long ascii", toName: long, subject: long, dyn: long, static: long, fromName: long},
		{name: "long non-ascii", toName: strings.Repeat("Zoë ", 50), subject: strings.Repeat("Grüße, ", 60), dyn: strings.Repeat("ü", 400), static: strings.Repeat("é ", 200), fromName: strings.Repeat("Ørsted ", 30)},
		{name: "looks encoded", toName: "=?utf-8?q?x?=", subject: "=?utf-8?q?Zo=C3=AB?=", dyn: "a =?x?q?y?= b", static: "=?", fromName: "Shop"},
		{name: "looks like an address", toName: "=?utf-8?q?evil?= <evil@attacker.example>", subject: "x", dyn: "y", static: "z", fromName: "=?utf-8?b?ZXZpbA==?= <evil@attacker.example>"},
		{name: "backslash", toName: `é\`, subject: `é\`, dyn: `\`, static: `a\b`, fromName: `Zoë \ Co\`},
		{name: "tab", toName: "A\tB", subject: "a\tb", dyn: "a\tb", static: "a\tb", fromName: "C\tD"},
		{name: "empty", toName: "", subject: "", dyn: "", static: "", fromName: ""},
	}
	dec := new(mime.WordDecoder)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := mimeTestLayout(mimeTestParts{Text: true})
			l.FromName = tt.fromName
			l.Headers[0].Value = tt.static
			v := mimeTestVarying()
			v.ToName, v.Subject, v.HeaderValues = tt.toName, tt.subject, []string{tt.dyn}
			p := mimeParse(t, mimeBuild(t, l, v))

			for field, want := range map[string]string{"Subject": tt.subject, "List-Unsubscribe": tt.dyn, "X-Campaign-ID": tt.static} {
				raw := mimeUnfold(t, p.Raw[field])
				got, err := dec.DecodeHeader(strings.TrimPrefix(raw, " "))
				if err != nil {
					t.Fatalf("%s: decoding %q: %v", field, raw, err)
				}
				if got != want {
					t.Errorf("%s: decodes to %q, want %q (raw %q)", field, got, want, p.Raw[field])
				}
				if simpleName(want) && !strings.Contains(want, "=?") && raw != " "+want && want != "" {
					t.Errorf("%s: printable ASCII written as %q", field, raw)
				}
			}
			for field, want := range map[string]mail.Address{"From": {Name: tt.fromName, Address: l.FromAddr}, "To": {Name: tt.toName, Address: v.ToAddr}} {
				raw := strings.TrimPrefix(mimeUnfold(t, p.Raw[field]), " ")
				// As net/mail writes it, but for what net/mail gets wrong: a
				// name holding "=?" (readers decode it even in a quoted
				// string) or '\\' (net/mail leaves it in a Q encoded word).
				if s := want.String(); raw != s && !strings.ContainsAny(want.Name, "=\\") {
					t.Errorf("%s: %q, want net/mail's %q", field, raw, s)
				}
				got, err := mail.ParseAddress(raw)
				if err != nil {
					t.Fatalf("%s: %q: %v", field, raw, err)
				}
				if got.Name != want.Name || got.Address != want.Address {
					t.Errorf("%s: parses to %q <%s>, want %q <%s>", field, got.Name, got.Address, want.Name, want.Address)
				}
			}
		})
	}
}

func TestSafeFileName(t *testing.T) {
	tests := []struct{ in, want string }{
		{"invoice.pdf", "invoice.pdf"},
		{"../../etc/passwd", "passwd"},
		{`C:\x\y.pdf`, "y.pdf"},
		{`a/b\c.txt`, "c.txt"},
		{"dir/", "attachment"},
		{"", "attachment"},
		{"..", "attachment"},
		{"  ", "attachment"},
		{"evil\r\nX-Injected: 1.pdf", "evilX-Injected: 1.pdf"},
		{"\x00nul\x7f.pdf", "nul.pdf"},
		{`my "quoted" file.pdf`, "my quoted file.pdf"},
		{"report\u202Efdp.exe", "reportfdp.exe"},
		{"Übersicht café.pdf", "Übersicht café.pdf"},
		{"bad\xffutf8.pdf", "badutf8.pdf"},
		{strings.Repeat("a", 300) + ".pdf", strings.Repeat("a", 251) + ".pdf"},
		{strings.Repeat("é", 200) + ".pdf", strings.Repeat("é", 125) + ".pdf"},
		// Encoded words are decoded before the reduction, as readers that
		// decode them in parameters would see the name.
		{"=?utf-8?q?=2E=2E=2F=2E=2E=2Fetc=2Fcron.d=2Fx?=", "x"},
		{"=?utf-8?b?Li4vLi4vZXRjL3Bhc3N3ZA==?=", "passwd"},
		{"=?utf-8?q?C:=5Cx=5Cevil.bat?=", "evil.bat"},
		{"=?utf-8?q?evil=0D=0AX-Injected:_1.pdf?=", "evilX-Injected: 1.pdf"},
		{"=?utf-8?q?invoice=E2=80=AEfdp.exe?=", "invoicefdp.exe"},
		{"invoice\u202efdp.exe", "invoicefdp.exe"},
		{"=?utf-8?q?=3D=3Futf-8=3Fq=3F=2E=2E=2Fx=3F=3D?=", "x?="}, // encoded twice
		{"=?iso-8859-1?q?caf=E9.pdf?=", "café.pdf"},
		{"=?x-unknown?q?=2E=2E=2Fx?=", "=?x-unknown?q?=2E=2E=2Fx?="},
		{"a=?b.pdf", "a=?b.pdf"},
		{"=?utf-8?q?=2E=2E?=", "attachment"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := SafeFileName(tt.in, "attachment"); got != tt.want {
				t.Errorf("SafeFileName(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
	if got := SafeFileName("", "image"); got != "image" {
		t.Errorf("empty image name = %q, want image", got)
	}

	// Through a whole message: the names come back intact from the headers.
	for _, tt := range tests {
		t.Run("message/"+tt.in, func(t *testing.T) {
			l := mimeTestLayout(mimeTestParts{HTML: true, Images: 1, Attachments: 1})
			l.Attachments[0].Name = tt.in
			l.Images[0].Name = tt.in
			p := mimeParse(t, mimeBuild(t, l, mimeTestVarying()))
			mimeCheckFile(t, p.Leaf(t, "application/pdf"), l.Attachments[0], "attachment", tt.want)
			img := tt.want
			if img == "attachment" {
				img = "image"
			}
			mimeCheckFile(t, p.Leaf(t, "image/png"), l.Images[0], "inline", img)
		})
	}
}

func TestMIMEContentTypeParams(t *testing.T) {
	l := mimeTestLayout(mimeTestParts{Text: true, Attachments: 1})
	l.Attachments[0].ContentType = `text/csv; charset=utf-8; name="ignored.csv"`
	l.Attachments[0].Name = "data.csv"
	p := mimeParse(t, mimeBuild(t, l, mimeTestVarying()))
	leaf := p.Leaf(t, "text/csv")
	if leaf.Param("charset") != "utf-8" || leaf.Param("name") != "data.csv" {
		t.Errorf("Content-Type %q, want charset=utf-8 name=data.csv", leaf.Header.Get("Content-Type"))
	}
}

func FuzzMIMEHeaders(f *testing.F) {
	f.Add("Alice", "Hello", "<https://x.example/u>")
	f.Add("Zoë, \"Z\"", "Grüße =?utf-8?q?x?= _", "ü\t=?")
	f.Add(strings.Repeat("Ørsted ", 30), strings.Repeat("lorem ", 200), strings.Repeat("x", 500))
	l := mimeTestLayout(mimeTestParts{Text: true})
	sk, err := New(l, mimeSeededRand(1))
	if err != nil {
		f.Fatal(err)
	}
	dec := new(mime.WordDecoder)
	f.Fuzz(func(t *testing.T, name, subject, value string) {
		if strings.ContainsAny(name+subject+value, "\r\n\x00") {
			t.Skip("the Mailer refuses CR, LF and NUL before the MIME layer")
		}
		v := mimeTestVarying()
		v.ToName, v.Subject, v.HeaderValues = name, subject, []string{value}
		msg, err := sk.Append(nil, v)
		if errors.Is(err, ErrHeaderLine) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		p := mimeParse(t, msg)
		for field, want := range map[string]string{"Subject": subject, "List-Unsubscribe": value} {
			raw := strings.TrimPrefix(mimeUnfold(t, p.Raw[field]), " ")
			got, err := dec.DecodeHeader(raw)
			if err != nil {
				t.Fatalf("%s: decoding %q: %v", field, raw, err)
			}
			if got != want {
				t.Errorf("%s: decodes to %q, want %q", field, got, want)
			}
		}
		if raw, want := strings.TrimPrefix(mimeUnfold(t, p.Raw["To"]), " "), (&mail.Address{Name: name, Address: v.ToAddr}).String(); raw != want {
			t.Errorf("To: %q, want net/mail's %q", raw, want)
		}
	})
}

func TestNameParam(t *testing.T) {
	tests := []struct{ name, want string }{
		{"report.pdf", `; filename="report.pdf"`},
		{"café.pdf", `; filename*=utf-8''caf%C3%A9.pdf`},
		// An encoded word that does not decode here (an unknown charset)
		// may decode elsewhere: RFC 2231 form, which no reader decodes as
		// RFC 2047.
		{"=?x-unknown?q?a?=", `; filename*=utf-8''%3D%3Fx-unknown%3Fq%3Fa%3F%3D`},
		{"a=?b", `; filename*=utf-8''a%3D%3Fb`},
		{"a?=b", `; filename="a?=b"`},
	}
	for _, tt := range tests {
		got := nameParam("filename", tt.name)
		if got != tt.want {
			t.Errorf("nameParam(%q) = %q, want %q", tt.name, got, tt.want)
		}
		_, params, err := mime.ParseMediaType("attachment" + got)
		if err != nil || params["filename"] != tt.name {
			t.Errorf("%q reads back as %q (%v), want %q", got, params["filename"], err, tt.name)
		}
	}
}
