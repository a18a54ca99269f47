// Package postroomtest is for the tests of applications that send mail
// with postroom, as net/http/httptest is for HTTP handlers: a Recorder, a
// postroom.Transport that keeps every message handed to it and gives them
// back decoded (subject, addresses, html, text, headers, attachments and
// inline images) instead of as raw MIME, and checks that report a
// mismatch in words a reader can act on:
//
//	want subject "Your order 1001", got "Your order "
//
// A test builds its application's Mailer over a Recorder instead of the
// SMTP transport, runs the code under test, and looks at what was sent:
//
//	rec := postroomtest.NewRecorder()
//	m, _ := postroom.New(rec, postroom.Options{Auth: postroom.NoAuth{}})
//	shop := NewShop(m)
//	shop.PlaceOrder(ctx, order)
//	msg := rec.Only(t)
//	msg.Check(t, postroomtest.Want{Subject: "Your order 1001", To: "ann@example.com", HTMLContains: []string{"€12.50"}})
//
// Messages are decoded with the standard library (net/mail,
// mime/multipart, mime/quotedprintable, encoding/base64), as a mail reader
// would, so a test sees what a recipient sees. Each Message also has its
// leaves (Parts, Find, Leaf) and its shape (Tree) for a test of the MIME
// structure. Parse reads a message that reached the test as bytes (from an
// SMTP server, from Mailer.Preview) and fails the test where it breaks a
// rule postroom writes by (CRLF lines of at most 998 octets, 7-bit,
// every leaf quoted-printable or base64). The Recorder does not show
// the params a recipient rendered with: a test knows them, since it made
// the call.
//
// For queued calls, see package outbox: a test that runs its River
// client's jobs sees their messages in the Recorder of the Mailer it gave
// the outbox.
package postroomtest

import (
	"bytes"
	"fmt"
	"mime"
	"net/mail"
	"strconv"
	"strings"
	"testing"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/testkit/mimeread"
	"github.com/postroom/postroom/transport"
)

// Recorder is a postroom.Transport that records every message it accepts,
// in the order they were handed over, as transport.Memory does (its Fail
// scripts delivery failures), and decodes them for tests. It is safe for
// concurrent use; the zero value is ready to use.
type Recorder struct {
	transport.Memory
}

// NewRecorder returns an empty Recorder.
func NewRecorder() *Recorder { return &Recorder{} }

// Messages returns every message recorded so far, decoded, in the order
// they were handed over. A message that does not decode fails tb: postroom
// never writes one.
func (r *Recorder) Messages(tb testing.TB) []*Message {
	tb.Helper()
	envs := r.Envelopes()
	msgs := make([]*Message, len(envs))
	for i := range envs {
		m, err := Decode(envs[i])
		if err != nil {
			tb.Fatalf("postroomtest: message %d (send_id %q): %v", i, envs[i].SendID, err)
		}
		msgs[i] = m
	}
	return msgs
}

// Only returns the one message recorded, or fails tb saying how many there
// were and to whom.
func (r *Recorder) Only(tb testing.TB) *Message {
	tb.Helper()
	msgs := r.Messages(tb)
	if len(msgs) != 1 {
		tb.Fatalf("postroomtest: %d messages sent, want 1%s", len(msgs), listTo(msgs))
	}
	return msgs[0]
}

// To returns the one message whose recipient (the first envelope
// recipient; bcc copies travel with it) is addr, compared without regard
// to case, or fails tb naming the recipients there were.
func (r *Recorder) To(tb testing.TB, addr string) *Message {
	tb.Helper()
	msgs := r.Messages(tb)
	var found []*Message
	for _, m := range msgs {
		if len(m.EnvelopeTo) > 0 && strings.EqualFold(m.EnvelopeTo[0], addr) {
			found = append(found, m)
		}
	}
	if len(found) != 1 {
		tb.Fatalf("postroomtest: %d messages to %q, want 1%s", len(found), addr, listTo(msgs))
	}
	return found[0]
}

// listTo says to whom msgs went, for a failure's text.
func listTo(msgs []*Message) string {
	if len(msgs) == 0 {
		return ""
	}
	to := make([]string, len(msgs))
	for i, m := range msgs {
		if len(m.EnvelopeTo) > 0 {
			to[i] = strconv.Quote(m.EnvelopeTo[0])
		} else {
			to[i] = "(none)"
		}
	}
	return "; sent to: " + strings.Join(to, ", ")
}

// Message is one recorded message, decoded. It is the caller's: nothing
// else refers to it.
type Message struct {
	// SendID is the send_id the Mailer reported for the message.
	SendID string
	// EnvelopeFrom is the reverse path (MAIL FROM); EnvelopeTo the
	// recipient followed by the bcc addresses (RCPT TO).
	EnvelopeFrom string
	EnvelopeTo   []string

	// From, To, Cc and ReplyTo are the header's addresses, decoded; Subject
	// the subject, decoded, with the leading and trailing spaces it was
	// written with (net/mail's Header trims them), so that a subject whose
	// placeholder rendered empty shows as "Your order ".
	From    *mail.Address
	To      []*mail.Address
	Cc      []*mail.Address
	ReplyTo []*mail.Address
	Subject string

	// Header is the top-level header as net/mail reads it (values not
	// decoded: use Header.Get and mime.WordDecoder, or the fields above).
	Header mail.Header

	// HTML and Text are the decoded html and text parts, "" when absent.
	HTML, Text string

	// Attachments are the parts with Content-Disposition attachment;
	// Inline the inline images (Content-ID, referred to by cid: in the
	// html), in the order they appear.
	Attachments []File
	Inline      []File

	// Keys are the top-level header's field names in the order they
	// appear.
	Keys []string
	// Parts are the leaves (the parts that are not multiparts), decoded,
	// in the order they appear; Tree is the message's shape, such as
	// "mixed(alternative(text/plain,text/html),application/pdf)": a
	// multipart as its subtype with its children in parentheses, a leaf
	// as its media type.
	Parts []Part
	Tree  string

	// Raw is the message as handed to the transport.
	Raw []byte
}

// Part is one leaf of a Message: a part that is not a multipart.
type Part struct {
	// Path is the media types from the message down to the part, joined
	// by ">", such as "multipart/alternative>text/html".
	Path string
	// Header is the part's header (the message's, for a message of one
	// part).
	Header mail.Header
	// Body is the content, decoded per Content-Transfer-Encoding; Raw the
	// content as encoded in the message.
	Body, Raw []byte
}

// Type is the part's media type: the last element of Path.
func (p Part) Type() string {
	return p.Path[strings.LastIndexByte(p.Path, '>')+1:]
}

// Param is the parameter key of the part's Content-Type, or "".
func (p Part) Param(key string) string {
	_, params, _ := mime.ParseMediaType(p.Header.Get("Content-Type"))
	return params[key]
}

// Parent is the media type of the multipart that holds the part, or ""
// for a message of one part.
func (p Part) Parent() string {
	i := strings.LastIndexByte(p.Path, '>')
	if i < 0 {
		return ""
	}
	return Part{Path: p.Path[:i]}.Type()
}

// File is an attachment or an inline image, decoded.
type File struct {
	// Name is the file name of its Content-Disposition or Content-Type.
	Name string
	// Type is its media type, such as "application/pdf".
	Type string
	// ContentID is its Content-ID without angle brackets, for inline images.
	ContentID string
	// Content is the decoded content.
	Content []byte
}

// Decode decodes env's message. It takes the envelope as a value, as
// Recorder.Envelopes (transport.Memory's) returns them, so that
//
//	for _, env := range rec.Envelopes() { msg, err := postroomtest.Decode(env) }
//
// reads as it should; a Transport's Send, which has a pointer, passes
// *env. Decode reads env and keeps none of it (the Message has copies).
// It returns an error when the message does not read as mail: a header
// net/mail refuses, a multipart that does not end, a transfer encoding
// other than 7bit, 8bit, binary, quoted-printable or base64. Parse holds a
// message to postroom's own stricter rules.
func Decode(env postroom.Envelope) (*Message, error) {
	r, err := mimeread.Read(env.Data)
	if err != nil {
		return nil, err
	}
	m, err := decode(r, env.Data)
	if err != nil {
		return nil, err
	}
	m.SendID, m.EnvelopeFrom, m.EnvelopeTo = env.SendID, env.From, append([]string(nil), env.To...)
	return m, nil
}

// Parse decodes the message data as Decode does, and fails tb where data
// breaks a rule postroom writes by: lines of at most 998 octets of 7-bit
// data other than NUL, each ending in CRLF, with no bare CR or LF; every
// leaf quoted-printable or base64. It is for a message that postroom
// wrote and that reached the test as bytes (an SMTP server's, a
// Preview's); its Message has no envelope.
func Parse(tb testing.TB, data []byte) *Message {
	tb.Helper()
	r, err := mimeread.Strict(data)
	if err != nil {
		tb.Fatalf("postroomtest: %v", err)
	}
	m, err := decode(r, data)
	if err != nil {
		tb.Fatalf("postroomtest: %v", err)
	}
	return m
}

// decode makes the Message of r, read from data.
func decode(r *mimeread.Message, data []byte) (*Message, error) {
	m := &Message{Header: r.Header, Keys: r.Keys, Tree: r.Tree, Raw: bytes.Clone(data)}
	var err error
	if m.Subject, err = new(mime.WordDecoder).DecodeHeader(rawHeaderValue(data, "Subject")); err != nil {
		return nil, fmt.Errorf("the subject: %w", err)
	}
	if from := r.Header.Get("From"); from != "" {
		if m.From, err = mail.ParseAddress(from); err != nil {
			return nil, fmt.Errorf("the From field: %w", err)
		}
	}
	for _, f := range []struct {
		name string
		to   *[]*mail.Address
	}{{"To", &m.To}, {"Cc", &m.Cc}, {"Reply-To", &m.ReplyTo}} {
		if r.Header.Get(f.name) == "" {
			continue
		}
		if *f.to, err = r.Header.AddressList(f.name); err != nil {
			return nil, fmt.Errorf("the %s field: %w", f.name, err)
		}
	}
	m.Parts = make([]Part, len(r.Parts))
	for i, p := range r.Parts {
		m.Parts[i] = Part{Path: p.Path, Header: p.Header, Body: p.Body, Raw: p.Raw}
		m.file(m.Parts[i])
	}
	return m, nil
}

// file files the leaf p in its field of m: the first html and text
// parts as HTML and Text, the others as Attachments or Inline.
func (m *Message) file(p Part) {
	mt, params, _ := mime.ParseMediaType(p.Header.Get("Content-Type"))
	if mt == "" {
		mt = "text/plain"
	}
	disp, dparams, _ := mime.ParseMediaType(p.Header.Get("Content-Disposition"))
	cid := strings.TrimSuffix(strings.TrimPrefix(p.Header.Get("Content-ID"), "<"), ">")
	switch {
	case disp == "attachment":
		m.Attachments = append(m.Attachments, File{Name: fileName(dparams, params), Type: mt, Content: p.Body})
	case cid != "" || disp == "inline" && !strings.HasPrefix(mt, "text/"):
		m.Inline = append(m.Inline, File{Name: fileName(dparams, params), Type: mt, ContentID: cid, Content: p.Body})
	case mt == "text/html" && m.HTML == "":
		m.HTML = string(p.Body)
	case mt == "text/plain" && m.Text == "":
		m.Text = string(p.Body)
	default:
		m.Attachments = append(m.Attachments, File{Name: fileName(dparams, params), Type: mt, Content: p.Body})
	}
}

// Find returns the leaf whose Path is path, the first if there are
// several, or fails tb listing the paths there are.
func (m *Message) Find(tb testing.TB, path string) Part {
	tb.Helper()
	for _, p := range m.Parts {
		if p.Path == path {
			return p
		}
	}
	tb.Fatalf("postroomtest: no part %s in %v", path, m.Paths())
	return Part{}
}

// Leaf returns the only leaf of media type mediaType, or fails tb.
func (m *Message) Leaf(tb testing.TB, mediaType string) Part {
	tb.Helper()
	var found []Part
	for _, p := range m.Parts {
		if p.Type() == mediaType {
			found = append(found, p)
		}
	}
	if len(found) != 1 {
		tb.Fatalf("postroomtest: %d parts of type %s, want 1 (tree %s)", len(found), mediaType, m.Tree)
	}
	return found[0]
}

// Paths returns the Path of every leaf, in order, in a new slice.
func (m *Message) Paths() []string {
	s := make([]string, 0, len(m.Parts))
	for _, p := range m.Parts {
		s = append(s, p.Path)
	}
	return s
}

// fileName is the filename of a Content-Disposition, else the name of a
// Content-Type (both decoded by mime.ParseMediaType).
func fileName(disposition, contentType map[string]string) string {
	if n := disposition["filename"]; n != "" {
		return n
	}
	return contentType["name"]
}

// rawHeaderValue returns the first value of the top-level header field
// name in data as it was written: unfolded (RFC 5322 section 2.2.3: each
// CRLF before white space removed), without the white space after the
// colon, but with any other leading or trailing white space, which
// net/textproto trims. It returns "" when there is no such field.
func rawHeaderValue(data []byte, name string) string {
	rest := data
	for len(rest) > 0 {
		end := bytes.IndexByte(rest, '\n')
		if end < 0 {
			end = len(rest)
		}
		// The field runs on through continuation lines.
		for end+1 < len(rest) && (rest[end+1] == ' ' || rest[end+1] == '\t') {
			next := bytes.IndexByte(rest[end+1:], '\n')
			if next < 0 {
				end = len(rest)
				break
			}
			end += 1 + next
		}
		field := rest[:end]
		if end < len(rest) {
			rest = rest[end+1:]
		} else {
			rest = nil
		}
		field = bytes.TrimSuffix(field, []byte("\r"))
		if len(field) == 0 {
			return "" // the end of the header
		}
		k, v, ok := bytes.Cut(field, []byte(":"))
		if !ok || !strings.EqualFold(string(k), name) {
			continue
		}
		v = bytes.ReplaceAll(v, []byte("\r\n"), nil)
		v = bytes.ReplaceAll(v, []byte("\n"), nil)
		if len(v) > 0 && (v[0] == ' ' || v[0] == '\t') {
			v = v[1:]
		}
		return string(v)
	}
	return ""
}
