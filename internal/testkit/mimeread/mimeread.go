// Package mimeread is the module's one MIME reader for tests: it reads a
// message back as a reader of mail would. Read reads the header with
// net/mail, walks the multipart tree with mime/multipart and decodes every
// leaf's quoted-printable or base64 body; Parse also holds the message to
// the rules postroom writes by (CheckLines, and every leaf quoted-printable
// or base64) and fails the test where it breaks one.
//
// The public package postroomtest decodes with Read; tests use
// postroomtest (Parse, Decode, a Recorder). This package is for the tests
// that cannot: those of the packages postroomtest imports (the root's
// package-internal tests, internal/mimemsg's). It imports nothing from the
// module. It checks the wire form only: whether the parts are the right
// ones is for the caller to assert.
//
// The functions are safe for concurrent use; a Message is a plain value
// owned by the caller.
package mimeread

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"strings"
	"testing"
)

// MaxLine is the longest line CheckLines allows, in octets without the
// CRLF (RFC 5322 section 2.1.1).
const MaxLine = 998

// The line rules, one sentinel each, found in a *LineError with errors.Is.
var (
	// ErrNoCRLF means the message does not end in CRLF.
	ErrNoCRLF = errors.New("mimeread: the message does not end in CRLF")
	// ErrBareCRLF means a CR not followed by LF, or an LF not preceded by
	// CR.
	ErrBareCRLF = errors.New("mimeread: bare CR or LF")
	// ErrLongLine means a line over MaxLine octets.
	ErrLongLine = errors.New("mimeread: line over 998 octets")
	// ErrNot7Bit means an octet over 127, or NUL (RFC 2045 section 2.7).
	ErrNot7Bit = errors.New("mimeread: octet not 7-bit")
)

// LineError is a broken line rule: Err is one of ErrNoCRLF, ErrBareCRLF,
// ErrLongLine and ErrNot7Bit, Line the 1-based number of the line (0 for
// ErrNoCRLF, which is about the whole message). The zero value is not a
// meaningful error; a LineError is a plain value, safe to share once made.
type LineError struct {
	Line int
	Err  error
}

// Error describes the rule broken and where.
func (e *LineError) Error() string {
	if e.Line == 0 {
		return e.Err.Error()
	}
	return fmt.Sprintf("line %d: %v", e.Line, e.Err)
}

// Unwrap returns Err.
func (e *LineError) Unwrap() error { return e.Err }

// CheckLines checks that data is lines that each end in CRLF, with no bare
// CR or LF, of at most MaxLine octets of 7-bit data other than NUL. It
// returns nil, or a *LineError for the first line that breaks a rule (an
// empty data is a message that does not end in CRLF).
func CheckLines(data []byte) error {
	line := 0
	for rest := data; len(rest) > 0; {
		line++
		i := bytes.Index(rest, []byte("\r\n"))
		if i < 0 {
			i = len(rest) // the last line, without its CRLF: checked below
		}
		content := rest[:i]
		rest = rest[min(i+2, len(rest)):]
		if bytes.ContainsAny(content, "\r\n") {
			return &LineError{Line: line, Err: ErrBareCRLF}
		}
		if len(content) > MaxLine {
			return &LineError{Line: line, Err: ErrLongLine}
		}
		for _, c := range content {
			if c >= 0x80 || c == 0 {
				return &LineError{Line: line, Err: ErrNot7Bit}
			}
		}
	}
	if !bytes.HasSuffix(data, []byte("\r\n")) {
		return &LineError{Err: ErrNoCRLF}
	}
	return nil
}

// Message is a message read back by Read or Parse, owned by the caller
// and sharing no memory with the data read. The zero value has no header
// and no parts. A Message is safe for concurrent reads; nothing in it
// changes after Read.
type Message struct {
	// Header is the top-level header as net/mail reads it.
	Header mail.Header
	// Keys are the top-level field names in the order they appear.
	Keys []string
	// Raw maps each top-level field name to its value as written: folded,
	// with its CRLFs, encoded words not decoded (the last one, for a name
	// written twice).
	Raw map[string]string
	// Parts are the leaves (non-multipart parts) in the order they appear.
	Parts []Part
	// Multiparts are the multipart parts in the order they begin, the
	// message itself first when it is one; their Body and Raw are nil.
	Multiparts []Part
	// Tree is the shape of the message, such as
	// "mixed(alternative(text/plain,text/html),application/pdf)": a
	// multipart as its subtype with its children in parentheses, a leaf as
	// its media type.
	Tree string
}

// Part is one part of a Message. The zero value is an empty part with no
// Path. Like its Message, it is read-only after Read.
type Part struct {
	// Path is the media types from the message down to this part, joined
	// by ">", such as "multipart/alternative>text/html".
	Path string
	// Header is the part's header (the message's, for a message of one part).
	Header mail.Header
	// Body is the content, decoded per Content-Transfer-Encoding.
	Body []byte
	// Raw is the content as encoded in the message.
	Raw []byte
}

// Type is the part's media type: the last element of Path.
func (p Part) Type() string {
	return p.Path[strings.LastIndexByte(p.Path, '>')+1:]
}

// Param is the parameter key of the part's Content-Type, or "".
func (p Part) Param(key string) string {
	_, params, _ := mime.ParseMediaType(p.Header.Get("Content-Type")) // parsed by Read
	return params[key]
}

// Parent is the media type of the multipart that holds the part, or ""
// for the message itself.
func (p Part) Parent() string {
	i := strings.LastIndexByte(p.Path, '>')
	if i < 0 {
		return ""
	}
	return Part{Path: p.Path[:i]}.Type()
}

// maxDepth bounds the nesting of multiparts Read follows; postroom writes
// at most three (mixed > related > alternative).
const maxDepth = 8

// Read reads data back as a reader of mail would: the header with
// net/mail, the multiparts with mime/multipart, each leaf decoded per its
// Content-Transfer-Encoding (7bit, 8bit, binary, quoted-printable or
// base64; a part without Content-Type is text/plain, as RFC 2045 says).
// It returns an error when data does not read as mail: a header net/mail
// refuses, a Content-Type that does not parse, a multipart that does not
// end or nests deeper than 8, another transfer encoding. The Message
// shares no memory with data.
func Read(data []byte) (*Message, error) {
	msg, err := mail.ReadMessage(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("mimeread: reading the header: %w", err)
	}
	m := &Message{Header: msg.Header, Raw: map[string]string{}}
	head, _, _ := bytes.Cut(data, []byte("\r\n\r\n"))
	var last string
	for _, line := range strings.Split(string(head), "\r\n") {
		if line == "" {
			continue
		}
		if line[0] == ' ' || line[0] == '\t' {
			m.Raw[last] += "\r\n" + line
			continue
		}
		name, value, _ := strings.Cut(line, ":")
		m.Keys = append(m.Keys, name)
		m.Raw[name], last = value, name
	}
	if m.Tree, err = m.walk("", msg.Header, msg.Body, 0); err != nil {
		return nil, err
	}
	return m, nil
}

// walk reads one part into m and returns its shape.
func (m *Message) walk(path string, h mail.Header, body io.Reader, depth int) (string, error) {
	ct := h.Get("Content-Type")
	if ct == "" {
		ct = "text/plain"
	}
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil {
		return "", fmt.Errorf("mimeread: %s: Content-Type %q: %w", path, ct, err)
	}
	if path != "" {
		path += ">"
	}
	path += mt
	if sub, ok := strings.CutPrefix(mt, "multipart/"); ok {
		if depth == maxDepth {
			return "", fmt.Errorf("mimeread: %s: multiparts nested deeper than %d", path, maxDepth)
		}
		m.Multiparts = append(m.Multiparts, Part{Path: path, Header: h})
		r := multipart.NewReader(body, params["boundary"])
		var kids []string
		for {
			p, err := r.NextRawPart()
			if errors.Is(err, io.EOF) {
				return sub + "(" + strings.Join(kids, ",") + ")", nil
			}
			if err != nil {
				return "", fmt.Errorf("mimeread: %s: %w", path, err)
			}
			kid, err := m.walk(path, mail.Header(p.Header), p, depth+1)
			if err != nil {
				return "", err
			}
			kids = append(kids, kid)
		}
	}
	raw, err := io.ReadAll(body)
	if err != nil {
		return "", fmt.Errorf("mimeread: %s: reading the body: %w", path, err)
	}
	var dec io.Reader
	switch cte := strings.ToLower(strings.TrimSpace(h.Get("Content-Transfer-Encoding"))); cte {
	case "", "7bit", "8bit", "binary":
		dec = bytes.NewReader(raw)
	case "quoted-printable":
		dec = quotedprintable.NewReader(bytes.NewReader(raw))
	case "base64":
		dec = base64.NewDecoder(base64.StdEncoding, bytes.NewReader(raw)) // CR and LF ignored
	default:
		return "", fmt.Errorf("mimeread: %s: Content-Transfer-Encoding %q", path, cte)
	}
	b, err := io.ReadAll(dec)
	if err != nil {
		return "", fmt.Errorf("mimeread: %s: decoding the body: %w", path, err)
	}
	m.Parts = append(m.Parts, Part{Path: path, Header: h, Body: b, Raw: raw})
	return mt, nil
}

// Parse reads data as Read does and fails tb if it does not read, if its
// lines break a rule of CheckLines, or if a leaf is encoded otherwise than
// quoted-printable or base64: the rules postroom writes by.
func Parse(tb testing.TB, data []byte) *Message {
	tb.Helper()
	m, err := Strict(data)
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

// Strict is Parse returning an error instead of failing a test: Read, after
// CheckLines, refusing a leaf not encoded quoted-printable or base64.
func Strict(data []byte) (*Message, error) {
	if err := CheckLines(data); err != nil {
		return nil, err
	}
	m, err := Read(data)
	if err != nil {
		return nil, err
	}
	for _, p := range m.Parts {
		switch cte := strings.ToLower(p.Header.Get("Content-Transfer-Encoding")); cte {
		case "quoted-printable", "base64":
		default:
			return nil, fmt.Errorf("mimeread: %s: Content-Transfer-Encoding %q, want quoted-printable or base64", p.Path, cte)
		}
	}
	return m, nil
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
	tb.Fatalf("mimeread: no part %s in %v", path, m.Paths())
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
		tb.Fatalf("mimeread: %d parts of type %s, want 1 (tree %s)", len(found), mediaType, m.Tree)
	}
	return found[0]
}

// CheckPostroom fails tb where m breaks what postroom's messages promise
// beyond any reader's rules: no Content-Transfer-Encoding on a multipart,
// multipart/related of type text/html, boundaries of "=_", a letter and
// 24 hex characters, and base64 in lines of 76 characters (the last one
// shorter).
func (m *Message) CheckPostroom(tb testing.TB) {
	tb.Helper()
	for _, mp := range m.Multiparts {
		sub := strings.TrimPrefix(mp.Type(), "multipart/")
		if cte := mp.Header.Get("Content-Transfer-Encoding"); cte != "" {
			tb.Errorf("mimeread: multipart/%s has Content-Transfer-Encoding %q", sub, cte)
		}
		if sub == "related" && mp.Param("type") != "text/html" {
			tb.Errorf("mimeread: multipart/related type parameter %q, want text/html", mp.Param("type"))
		}
		if b := mp.Param("boundary"); !strings.HasPrefix(b, "=_") || len(b) != 27 {
			tb.Errorf("mimeread: boundary %q is not =_, a letter and 24 hex characters", b)
		}
	}
	for _, p := range m.Parts {
		if !strings.EqualFold(p.Header.Get("Content-Transfer-Encoding"), "base64") {
			continue
		}
		lines := strings.Split(string(p.Raw), "\r\n")
		for i, l := range lines {
			if len(l) != 76 && (i < len(lines)-1 || len(l) > 76) {
				tb.Errorf("mimeread: %s: base64 line %d of %d is %d characters", p.Path, i, len(lines), len(l))
			}
		}
	}
}

// Paths returns the Path of every leaf, in order, in a new slice.
func (m *Message) Paths() []string {
	s := make([]string, 0, len(m.Parts))
	for _, p := range m.Parts {
		s = append(s, p.Path)
	}
	return s
}

// DecodeHeader returns the header value v with its RFC 2047 encoded words
// decoded, or fails tb if one does not decode.
func DecodeHeader(tb testing.TB, v string) string {
	tb.Helper()
	s, err := new(mime.WordDecoder).DecodeHeader(v)
	if err != nil {
		tb.Fatalf("mimeread: decoding header %q: %v", v, err)
	}
	return s
}
