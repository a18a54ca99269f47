package postroomtest_test

import (
	"encoding/base64"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/postroomtest"
)

// receiptCall is a shop's receipt: html and text with placeholders, a
// header, a bcc, an inline logo and an attached invoice.
func receiptCall() *postroom.Call {
	png := []byte("\x89PNG\r\n\x1a\nnot really a picture")
	pdf := []byte("%PDF-1.4 invoice 1001 \x00\xff")
	return &postroom.Call{
		Message: postroom.Message{
			FromEmail: "shop@example.com", FromName: "The Shop",
			Subject: "Your order {{order_id}}",
			HTML:    `<p>Thank you, {{name}}! Total: {{total}}</p><img src="cid:logo">`,
			Text:    "Thank you, {{name}}! Total: {{total}}",
			BCC:     "audit@example.com",
			Headers: []postroom.Header{{Name: "X-Order", Value: "{{order_id}}"}},
			Images:  []postroom.Image{{Name: "logo.png", CID: "logo", ContentType: "image/png", Content: base64.StdEncoding.EncodeToString(png)}},
			Attachments: []postroom.Attachment{
				{Name: "invoice-1001.pdf", ContentType: "application/pdf", Content: base64.StdEncoding.EncodeToString(pdf)},
			},
		},
		Recipients: []postroom.Recipient{
			{Email: "ann@example.com", Name: "Ann Ördög", Params: postroom.Params{"name": "Ann", "order_id": "1001", "total": "€12.50"}},
			{Email: "bob@example.com", Params: postroom.Params{"name": "Bob", "order_id": "1002", "total": "€3.00"}},
		},
	}
}

// TestRecorderDecodes: every field of a Message is what the call asked
// for, read back from the MIME the Mailer wrote.
func TestRecorderDecodes(t *testing.T) {
	rec := postroomtest.NewRecorder()
	m, err := postroom.New(rec, postroom.Options{Auth: postroom.NoAuth{}})
	if err != nil {
		t.Fatal(err)
	}
	results, err := m.Send(t.Context(), receiptCall())
	if err != nil {
		t.Fatal(err)
	}
	msgs := rec.Messages(t)
	if len(msgs) != 2 {
		t.Fatalf("%d messages, want 2", len(msgs))
	}
	ann := rec.To(t, "ANN@example.com")
	if ann.SendID != results[0].SendID {
		t.Errorf("send_id %s, want %s", ann.SendID, results[0].SendID)
	}
	if ann.Subject != "Your order 1001" || ann.From.Address != "shop@example.com" || ann.From.Name != "The Shop" {
		t.Errorf("subject %q from %v", ann.Subject, ann.From)
	}
	if len(ann.To) != 1 || ann.To[0].Address != "ann@example.com" || ann.To[0].Name != "Ann Ördög" {
		t.Errorf("To %v", ann.To)
	}
	if !strings.Contains(ann.HTML, "Thank you, Ann! Total: €12.50") || ann.Text != "Thank you, Ann! Total: €12.50" {
		t.Errorf("html %q text %q", ann.HTML, ann.Text)
	}
	if got := ann.HeaderValue("X-Order"); got != "1001" {
		t.Errorf("X-Order %q", got)
	}
	if len(ann.EnvelopeTo) != 2 || ann.EnvelopeTo[1] != "audit@example.com" || ann.Header.Get("Bcc") != "" {
		t.Errorf("envelope to %v, Bcc header %q", ann.EnvelopeTo, ann.Header.Get("Bcc"))
	}
	call := receiptCall()
	if len(ann.Attachments) != 1 || ann.Attachments[0].Name != "invoice-1001.pdf" || ann.Attachments[0].Type != "application/pdf" ||
		base64.StdEncoding.EncodeToString(ann.Attachments[0].Content) != call.Message.Attachments[0].Content {
		t.Errorf("attachments %+v", ann.Attachments)
	}
	if len(ann.Inline) != 1 || ann.Inline[0].ContentID != "logo" || ann.Inline[0].Type != "image/png" ||
		base64.StdEncoding.EncodeToString(ann.Inline[0].Content) != call.Message.Images[0].Content {
		t.Errorf("inline %+v", ann.Inline)
	}
	ann.Check(t, postroomtest.Want{
		Subject: "Your order 1001", From: "shop@example.com", To: "ann@example.com", BCC: []string{"audit@example.com"},
		HTMLContains: []string{"€12.50"}, TextContains: []string{"Ann"}, HTMLLacks: []string{"{{"},
		Headers: map[string]string{"X-Order": "1001"}, Attachments: []string{"invoice-1001.pdf"}, Inline: []string{"logo"},
	})
}

// recordingTB records what Check reports instead of failing the test.
type recordingTB struct {
	testing.TB
	errors []string
}

func (r *recordingTB) Helper() {}
func (r *recordingTB) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

// Fatalf records the failure and ends the goroutine, as testing's does:
// call what may fail through fatal.
func (r *recordingTB) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	runtime.Goexit()
}

// fatal runs f with r in a goroutine of its own, for a Fatalf to end.
func (r *recordingTB) fatal(f func(testing.TB)) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
	}()
	<-done
}

// TestCheckReportsMismatches: Check names each difference with what was
// wanted and what was got, and passes a matching message.
func TestCheckReportsMismatches(t *testing.T) {
	rec := postroomtest.NewRecorder()
	m, err := postroom.New(rec, postroom.Options{Auth: postroom.NoAuth{}})
	if err != nil {
		t.Fatal(err)
	}
	call := receiptCall()
	call.Recipients = call.Recipients[:1]
	delete(call.Recipients[0].Params, "order_id") // the bug under test: the subject loses its order id
	if _, err := m.Send(t.Context(), call); err != nil {
		t.Fatal(err)
	}
	msg := rec.Only(t)
	tb := &recordingTB{TB: t}
	ok := msg.Check(tb, postroomtest.Want{
		Subject:      "Your order 1001",
		To:           "ann@example.com",
		HTMLContains: []string{"€99"},
		Headers:      map[string]string{"X-Order": "1001"},
		Attachments:  []string{"invoice.pdf"},
	})
	want := []string{
		`postroomtest: message to ann@example.com: want subject "Your order 1001", got "Your order "`,
		`postroomtest: message to ann@example.com: want html part containing "€99", got "<p>Thank you, Ann! Total: €12.50</p><img src=\"cid:logo\">"`,
		`postroomtest: message to ann@example.com: want header X-Order "1001", got ""`,
		`postroomtest: message to ann@example.com: want attachments ["invoice.pdf"], got ["invoice-1001.pdf"]`,
	}
	if ok || strings.Join(tb.errors, "\n") != strings.Join(want, "\n") {
		t.Errorf("Check = %v, reported:\n%s\nwant:\n%s", ok, strings.Join(tb.errors, "\n"), strings.Join(want, "\n"))
	}
	tb = &recordingTB{TB: t}
	if !msg.Check(tb, postroomtest.Want{Subject: "Your order ", To: "ann@example.com"}) || len(tb.errors) != 0 {
		t.Errorf("a matching message: %q", tb.errors)
	}
}

// TestDecodeTakesEnvelopes: Decode takes the values Envelopes returns,
// and decodes each as Messages does.
func TestDecodeTakesEnvelopes(t *testing.T) {
	rec := postroomtest.NewRecorder()
	m, err := postroom.New(rec, postroom.Options{Auth: postroom.NoAuth{}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Send(t.Context(), receiptCall()); err != nil {
		t.Fatal(err)
	}
	msgs := rec.Messages(t)
	envs := rec.Envelopes()
	if len(envs) != len(msgs) || len(envs) != 2 {
		t.Fatalf("%d envelopes, %d messages, want 2", len(envs), len(msgs))
	}
	for i, env := range envs {
		got, err := postroomtest.Decode(env)
		if err != nil {
			t.Fatal(err)
		}
		if got.SendID != msgs[i].SendID || got.Subject != msgs[i].Subject || got.HTML != msgs[i].HTML {
			t.Errorf("envelope %d decodes as %q %q, Messages has %q %q", i, got.SendID, got.Subject, msgs[i].SendID, msgs[i].Subject)
		}
	}
}

// TestValuesAsWritten: the subject and header values keep the spaces at
// their ends they were written with (a placeholder that rendered empty),
// folded lines are unfolded, and a mismatch quotes both sides so that
// the spaces show.
func TestValuesAsWritten(t *testing.T) {
	rec := postroomtest.NewRecorder()
	m, err := postroom.New(rec, postroom.Options{Auth: postroom.NoAuth{}})
	if err != nil {
		t.Fatal(err)
	}
	call := &postroom.Call{
		Message: postroom.Message{
			FromEmail: "shop@example.com", Subject: "{{greeting}} your order",
			Text:    "Hello",
			Headers: []postroom.Header{{Name: "X-Ref", Value: "A-{{ref}}  "}, {Name: "X-Long", Value: strings.Repeat("word ", 40) + "end"}},
		},
		Recipients: []postroom.Recipient{{Email: "ann@example.com", Params: postroom.Params{"ref": "1"}}},
	}
	if _, err := m.Send(t.Context(), call); err != nil {
		t.Fatal(err)
	}
	msg := rec.Only(t)
	if msg.Subject != " your order" {
		t.Errorf("subject %q, want %q", msg.Subject, " your order")
	}
	if got := msg.HeaderValue("x-ref"); got != "A-1  " {
		t.Errorf("X-Ref %q, want %q", got, "A-1  ")
	}
	if got, want := msg.HeaderValue("X-Long"), strings.Repeat("word ", 40)+"end"; got != want {
		t.Errorf("X-Long %q, want %q", got, want)
	}
	if got := msg.HeaderValue("X-Absent"); got != "" {
		t.Errorf("X-Absent %q, want \"\"", got)
	}
	tb := &recordingTB{TB: t}
	msg.Check(tb, postroomtest.Want{Subject: "your order", Headers: map[string]string{"X-Ref": "A-1"}})
	want := []string{
		`postroomtest: message to ann@example.com: want subject "your order", got " your order"`,
		`postroomtest: message to ann@example.com: want header X-Ref "A-1", got "A-1  "`,
	}
	if strings.Join(tb.errors, "\n") != strings.Join(want, "\n") {
		t.Errorf("reported:\n%s\nwant:\n%s", strings.Join(tb.errors, "\n"), strings.Join(want, "\n"))
	}
}

// TestFailuresQuote: Recorder.To's failure quotes the address asked for
// and the recipients there were; a body's excerpt is cut at a
// character's start.
func TestFailuresQuote(t *testing.T) {
	rec := postroomtest.NewRecorder()
	m, err := postroom.New(rec, postroom.Options{Auth: postroom.NoAuth{}})
	if err != nil {
		t.Fatal(err)
	}
	call := &postroom.Call{
		Message:    postroom.Message{FromEmail: "shop@example.com", Subject: "Hi", Text: strings.Repeat("€", 100)},
		Recipients: []postroom.Recipient{{Email: "ann@example.com"}},
	}
	if _, err := m.Send(t.Context(), call); err != nil {
		t.Fatal(err)
	}
	tb := &recordingTB{TB: t}
	tb.fatal(func(tb testing.TB) { rec.To(tb, "ann@example.com ") })
	want := `postroomtest: 0 messages to "ann@example.com ", want 1; sent to: "ann@example.com"`
	if len(tb.errors) != 1 || tb.errors[0] != want {
		t.Errorf("To reported %q, want %q", tb.errors, want)
	}
	tb = &recordingTB{TB: t}
	rec.Only(t).Check(tb, postroomtest.Want{TextContains: []string{"$"}})
	if len(tb.errors) != 1 || !utf8.ValidString(tb.errors[0]) || strings.Contains(tb.errors[0], `\x`) || !strings.HasSuffix(tb.errors[0], `…"`) {
		t.Errorf("Check reported %q, want an excerpt cut at a character's start", tb.errors)
	}
}

// TestParse: Parse decodes a message given as bytes, with its leaves and
// shape, and holds it to the line rules.
func TestParse(t *testing.T) {
	data := "From: shop@example.com\r\nTo: ann@example.org\r\nSubject: =?UTF-8?q?Caf=C3=A9?=\r\nMIME-Version: 1.0\r\n" +
		"Content-Type: multipart/alternative; boundary=\"a\"\r\n\r\n" +
		"--a\r\nContent-Type: text/plain; charset=UTF-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\nCaf=C3=A9\r\n" +
		"--a\r\nContent-Type: text/html; charset=UTF-8\r\nContent-Transfer-Encoding: base64\r\n\r\nPHA+aGk8L3A+\r\n--a--\r\n"
	m := postroomtest.Parse(t, []byte(data))
	if m.Subject != "Café" || m.Text != "Café" || m.HTML != "<p>hi</p>" {
		t.Errorf("Subject %q, Text %q, HTML %q", m.Subject, m.Text, m.HTML)
	}
	if m.Tree != "alternative(text/plain,text/html)" || strings.Join(m.Keys, " ") != "From To Subject MIME-Version Content-Type" {
		t.Errorf("Tree %s, Keys %q", m.Tree, m.Keys)
	}
	if p := m.Leaf(t, "text/html"); p.Parent() != "multipart/alternative" || p.Param("charset") != "UTF-8" || string(p.Raw) != "PHA+aGk8L3A+" {
		t.Errorf("html leaf %+v", p)
	}
	if got := string(m.Find(t, "multipart/alternative>text/plain").Body); got != "Café" {
		t.Errorf("text body %q", got)
	}
	ft := &fatalTB{TB: t}
	func() {
		defer func() { _ = recover() }()
		postroomtest.Parse(ft, []byte(strings.ReplaceAll(data, "\r\n", "\n")))
	}()
	if !ft.failed {
		t.Error("Parse took bare LF line ends")
	}
}

// fatalTB records Fatalf and stops the goroutine's function with a panic
// instead of runtime.Goexit, for a test of a function that fails its tb.
type fatalTB struct {
	testing.TB
	failed bool
}

func (f *fatalTB) Helper() {}

func (f *fatalTB) Fatalf(string, ...any) {
	f.failed = true
	panic("fatal")
}
