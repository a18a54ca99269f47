package mimemsg

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"slices"
	"time"

	"github.com/postroom/postroom/internal/qp"
)

// File is an inline image or an attachment, already validated: its
// content decoded (Data) or already encoded (Lines). New reads it and
// keeps only Lines, which it does not modify. The zero
// File is an empty file named "attachment" (or "image") of no valid
// content type: New refuses it.
type File struct {
	// Name is as given by the caller; it is reduced with SafeFileName.
	Name string
	// CID is the Content-ID of an image (without angle brackets), already
	// validated: atext, '.' and '@' only. Empty for attachments.
	CID string
	// ContentType is a validated media type with parameters, such as
	// "image/png" or "application/pdf"; any name parameter is replaced.
	ContentType string
	// Data is the decoded content, written base64 encoded when Lines is
	// nil.
	Data []byte
	// Lines is the content as base64 in lines of 76 characters, as
	// WrapBase64 writes it (New does not check it). When not nil, Data is
	// not read, and the Skeleton refers to Lines instead of copying it:
	// the bytes must not change while the Skeleton is in use. The Mailer
	// shares one Lines among the calls that attach the same content.
	Lines []byte
}

// Header is a custom header field of a call. The zero Header has no
// name and is not valid; the Mailer validates names before the MIME layer.
type Header struct {
	// Name is a validated ftext field name, written as given.
	Name string
	// Value is the value when !Dynamic, encoded once per call.
	Value string
	// Dynamic says the value differs per recipient: it is supplied in
	// Varying.HeaderValues.
	Dynamic bool
	// Structured says Value (static) is a structured value, printable
	// ASCII checked by the caller (List-Id: a phrase, maybe of encoded
	// words, and an <id>): it is folded as is, never made encoded words
	// (AppendValue).
	Structured bool
}

// AppendValue appends h's static value as the skeleton writes it:
// folded as is when h is Structured, else as AppendText writes it.
func AppendValue(dst []byte, h Header) ([]byte, error) {
	if h.Structured {
		return appendFolded(dst, len(h.Name)+1, h.Value)
	}
	return AppendText(dst, len(h.Name)+1, h.Value)
}

// Layout is what a call's messages share. New reads it and
// does not keep it or modify it. The zero Layout has neither text nor
// html, which New refuses.
type Layout struct {
	// FromAddr is an ASCII addr-spec (domain already in A-label form).
	FromName, FromAddr string
	// ReplyToAddr empty means no Reply-To field.
	ReplyToName, ReplyToAddr string
	// Date is written once per call as an RFC 5322 date.
	Date    time.Time
	Headers []Header
	// At least one of HasText and HasHTML is true.
	HasText, HasHTML bool
	// Images are used only when HasHTML.
	Images      []File
	Attachments []File
	// MaxSize is the largest message Append builds: past it, it
	// stops with ErrTooLarge. 0: no limit.
	MaxSize int
}

// Varying is what differs per recipient. Append reads it and
// does not keep it or modify it; the Mailer may reuse it for the next
// recipient once Append returns. The zero Varying has no
// address and is not a valid recipient.
type Varying struct {
	// ToAddr is an ASCII addr-spec.
	ToName, ToAddr string
	// Subject is rendered, may be non-ASCII, holds no CR or LF.
	Subject string
	// MessageID is a complete msg-id with angle brackets: "<sendid@domain>".
	MessageID string
	// HeaderValues are the rendered values of the Dynamic headers, in the
	// order they appear in Layout.Headers; no CR, LF or NUL.
	HeaderValues []string
	// Text and HTML are the rendered UTF-8 bodies, used per HasText and
	// HasHTML.
	Text, HTML []byte
}

// ErrHeaderLine is wrapped by the error of Append or New for
// a header value holding a run without white space too long to fit a
// 998-octet line (RFC 5322 §2.1.1).
var ErrHeaderLine = errors.New("postroom: header value cannot be folded within 998 octets")

// ErrTooLarge is the error of Append for a message that would
// exceed Layout.MaxSize.
var ErrTooLarge = errors.New("postroom: message over the size limit")

// Line limits of RFC 5322 §2.1.1, without the CRLF.
const (
	foldAt  = 78
	maxLine = 998
)

// segKind says what a Skeleton segment writes.
type segKind uint8

const (
	segStatic    segKind = iota // data, as is
	segTo                       // the recipient's address
	segSubject                  // the subject
	segMessageID                // the Message-ID
	segHeader                   // HeaderValues[index]
	segText                     // the text body, quoted-printable
	segHTML                     // the html body, quoted-printable
)

// segment is one piece of a Skeleton.
type segment struct {
	kind  segKind
	index int    // segHeader: index into Varying.HeaderValues
	line  int    // header values: octets already on the line
	name  string // header values: the field name, for errors
	final bool   // bodies: the body ends the message
	data  []byte // segStatic
}

// Skeleton is a call's messages laid out once: static segments, and slots
// for what differs per recipient. It is read-only after New, so
// Append may run from many goroutines at once without locks. It owns
// its segments (copies of the layout's bytes), except the files' Lines,
// which it refers to. The zero
// Skeleton writes nothing; make one with New.
type Skeleton struct {
	segs    []segment
	static  int // octets in static segments
	dynamic int // number of dynamic headers
	max     int // Layout.MaxSize, or the largest int
}

// New lays out, once per call, every byte that is the same for all
// recipients: From, Reply-To, Date, MIME-Version, static custom headers,
// boundaries (drawn from rnd; crypto/rand when rnd is nil), part headers,
// and the base64 of every image and attachment. It reads l and does not
// keep it. It fails when rnd fails, when a content type does not parse, or
// when a header line cannot be kept within 998 octets (ErrHeaderLine).
func New(l *Layout, rnd io.Reader) (*Skeleton, error) {
	if rnd == nil {
		rnd = rand.Reader
	}
	if !l.HasText && !l.HasHTML {
		return nil, errors.New("postroom: message has neither text nor html")
	}
	size := 4096
	for _, f := range slices.Concat(l.Images, l.Attachments) {
		if f.Lines != nil {
			size += 1024 // the part's header fields; Lines are referred to
			continue
		}
		n := base64.StdEncoding.EncodedLen(len(f.Data))
		size += n + 2*(n/76) + 1024
	}
	b := &skelBuilder{buf: make([]byte, 0, size)}
	b.sk.max = l.MaxSize
	if b.sk.max <= 0 {
		b.sk.max = int(^uint(0) >> 1)
	}
	if err := b.header("From", addressString(l.FromName, l.FromAddr)); err != nil {
		return nil, err
	}
	b.str("To:")
	b.slot(segment{kind: segTo, name: "To"})
	b.str("\r\n")
	if l.ReplyToAddr != "" {
		if err := b.header("Reply-To", addressString(l.ReplyToName, l.ReplyToAddr)); err != nil {
			return nil, err
		}
	}
	b.str("Subject:")
	b.slot(segment{kind: segSubject, name: "Subject"})
	b.str("\r\nDate: ")
	b.buf = l.Date.AppendFormat(b.buf, time.RFC1123Z)
	b.str("\r\nMessage-ID:")
	b.slot(segment{kind: segMessageID, name: "Message-ID"})
	b.str("\r\nMIME-Version: 1.0\r\n")
	for _, h := range l.Headers {
		if len(h.Name)+2 > maxLine {
			return nil, fmt.Errorf("%w: field name of %d octets", ErrHeaderLine, len(h.Name))
		}
		if !h.Dynamic {
			b.str(h.Name)
			b.str(":")
			var err error
			if b.buf, err = AppendValue(b.buf, h); err != nil {
				return nil, fmt.Errorf("postroom: %s field: %w", h.Name, err)
			}
			b.str("\r\n")
			continue
		}
		b.str(h.Name)
		b.str(":")
		b.slot(segment{kind: segHeader, index: b.sk.dynamic, name: h.Name})
		b.sk.dynamic++
		b.str("\r\n")
	}

	top, err := buildTree(l, rnd)
	if err != nil {
		return nil, err
	}
	if err := b.part(top, true); err != nil {
		return nil, err
	}
	b.flush()
	return &b.sk, nil
}

// StaticSize is the number of octets every message of the call carries
// whatever the recipient: images, attachments, part headers and the
// headers that do not vary. The Mailer checks it against the message size
// limit once per call.
func (s *Skeleton) StaticSize() int { return s.static }

// Append appends one complete message for v to dst and returns the
// extended buffer. It grows dst once to an upper bound of the message's
// size, never beyond Layout.MaxSize, so with enough capacity it
// allocates nothing for an ASCII subject and header values. It is safe for
// concurrent use. It fails for a header value that cannot be written
// within 998-octet lines (ErrHeaderLine), for a message that would exceed
// Layout.MaxSize (ErrTooLarge, found before encoding a part that
// cannot fit, so that the buffer stays within a small multiple of the
// limit), or when v has not one value per dynamic header; dst is then
// returned at its original length.
func (s *Skeleton) Append(dst []byte, v *Varying) ([]byte, error) {
	if len(v.HeaderValues) != s.dynamic {
		return dst, fmt.Errorf("postroom: %d dynamic header values for %d dynamic headers", len(v.HeaderValues), s.dynamic)
	}
	start := len(dst)
	bound := s.maxSize(v)
	dst = slices.Grow(dst, min(bound, s.max))
	check := bound > s.max // else the message cannot exceed the limit
	var err error
	for i := range s.segs {
		seg := &s.segs[i]
		// Every encoding writes at least one octet per input octet: a
		// segment whose input alone does not fit is refused before it is
		// encoded.
		if check && len(dst)-start+seg.minSize(v) > s.max {
			return dst[:start], ErrTooLarge
		}
		switch seg.kind {
		case segStatic:
			dst = append(dst, seg.data...)
		case segTo:
			dst, err = appendAddress(dst, seg.line, v.ToName, v.ToAddr)
		case segSubject:
			dst, err = AppendText(dst, seg.line, v.Subject)
		case segMessageID:
			dst, err = appendFolded(dst, seg.line, v.MessageID)
		case segHeader:
			dst, err = AppendText(dst, seg.line, v.HeaderValues[seg.index])
		case segText, segHTML:
			body := v.Text
			if seg.kind == segHTML {
				body = v.HTML
			}
			if check && !bodyFits(dst, body, seg.final, s.max-(len(dst)-start)) {
				return dst[:start], ErrTooLarge
			}
			dst = appendBody(dst, body, seg.final)
		}
		if err != nil {
			return dst[:start], &FieldError{Field: seg.name, Err: err}
		}
		if check && len(dst)-start > s.max {
			return dst[:start], ErrTooLarge
		}
	}
	return dst, nil
}

// minSize is a lower bound of the octets seg writes for v.
func (seg *segment) minSize(v *Varying) int {
	switch seg.kind {
	case segStatic:
		return len(seg.data)
	case segTo:
		return len(v.ToAddr)
	case segSubject:
		return len(v.Subject)
	case segMessageID:
		return len(v.MessageID)
	case segHeader:
		return len(v.HeaderValues[seg.index])
	case segText:
		return len(v.Text)
	case segHTML:
		return len(v.HTML)
	}
	return 0
}

// maxSize is an upper bound of the size of v's message.
func (s *Skeleton) maxSize(v *Varying) int {
	n := s.static + qp.MaxLen(len(v.Text)) + qp.MaxLen(len(v.HTML)) + 6
	n += headerBound(len(v.ToName)+len(v.ToAddr)) + headerBound(len(v.Subject)) + headerBound(len(v.MessageID))
	for _, h := range v.HeaderValues {
		n += headerBound(len(h))
	}
	return n
}

// headerBound is an upper bound of the encoded and folded size of an
// n-octet header value: 3 octets per input octet (Q encoding, quoting),
// and per encoded word of up to 75 octets its 12-octet frame and a fold.
func headerBound(n int) int {
	return 3*n + (3*n/60+1)*15 + 8
}

// appendBody appends body quoted-printable. A body that ends the message
// and does not end with a line break gets a final soft line break, so the
// message ends with CRLF and the body decodes to exactly its input.
func appendBody(dst, body []byte, final bool) []byte {
	dst = qp.Append(dst, body)
	if final && !bytes.HasSuffix(dst, crlf) {
		dst = append(dst, '=', '\r', '\n')
	}
	return dst
}

var crlf = []byte("\r\n")

// bodyFits reports whether appendBody(dst, body, final) appends at most
// room octets. It measures the encoding (qp.Len) only when the bound
// qp.MaxLen says it might not fit, so that a body is never encoded, three
// times its size, only to be refused.
func bodyFits(dst, body []byte, final bool, room int) bool {
	if qp.MaxLen(len(body))+3 <= room {
		return true
	}
	n := qp.Len(body)
	endsCRLF := bytes.HasSuffix(dst, crlf) // what appendBody checks, for an empty body
	if len(body) > 0 {
		endsCRLF = body[len(body)-1] == '\n' // the encoding ends with CRLF exactly then
	}
	if final && !endsCRLF {
		n += 3
	}
	return n <= room
}

// skelBuilder collects a skeleton's segments. Static segments are
// consecutive pieces of buf, sized once for the files' base64, or a
// file's Lines (shared).
type skelBuilder struct {
	sk   Skeleton
	buf  []byte // static bytes; buf[mark:] is the run not yet flushed
	mark int
}

func (b *skelBuilder) str(s string) { b.buf = append(b.buf, s...) }

// flush ends the current static run.
func (b *skelBuilder) flush() {
	if len(b.buf) == b.mark {
		return
	}
	b.sk.segs = append(b.sk.segs, segment{kind: segStatic, data: b.buf[b.mark:len(b.buf):len(b.buf)]})
	b.sk.static += len(b.buf) - b.mark
	b.mark = len(b.buf)
}

// shared adds lines, a file's Lines, as a static segment of its own,
// referred to and not copied. Lines end without a line break: what follows
// starts with one, so slot finds no line of buf broken by it.
func (b *skelBuilder) shared(lines []byte) {
	b.flush()
	if len(lines) == 0 {
		return
	}
	b.sk.segs = append(b.sk.segs, segment{kind: segStatic, data: lines[:len(lines):len(lines)]})
	b.sk.static += len(lines)
}

// slot adds a per-recipient segment at the current position.
func (b *skelBuilder) slot(seg segment) {
	seg.line = len(b.buf) - (bytes.LastIndexByte(b.buf, '\n') + 1)
	b.flush()
	b.sk.segs = append(b.sk.segs, seg)
}

// header writes a whole header field with an already-encoded value.
func (b *skelBuilder) header(name, value string) error {
	b.str(name)
	b.str(":")
	var err error
	b.buf, err = appendFolded(b.buf, len(name)+1, value)
	if err != nil {
		return fmt.Errorf("postroom: %s field: %w", name, err)
	}
	b.str("\r\n")
	return nil
}

// mimeNode is a part of the tree; see the tree at the top of this file.
type mimeNode struct {
	multipart string // "mixed", "alternative", "related"; empty for a leaf
	boundary  string
	children  []*mimeNode
	body      segKind // segText or segHTML for a body leaf
	file      *File   // an image or attachment leaf
	inline    bool    // the file is an image
}

// buildTree builds the minimal tree for l, drawing boundaries from rnd in
// a fixed order (mixed, alternative, related) so that a fixed rnd gives
// the same message.
func buildTree(l *Layout, rnd io.Reader) (*mimeNode, error) {
	multi := func(kind string, tag byte) (*mimeNode, error) {
		bnd, err := newBoundary(rnd, tag)
		return &mimeNode{multipart: kind, boundary: bnd}, err
	}
	var mixed, alt, rel *mimeNode
	var err error
	if len(l.Attachments) > 0 {
		if mixed, err = multi("mixed", 'm'); err != nil {
			return nil, err
		}
	}
	if l.HasText && l.HasHTML {
		if alt, err = multi("alternative", 'a'); err != nil {
			return nil, err
		}
	}
	if l.HasHTML && len(l.Images) > 0 {
		if rel, err = multi("related", 'r'); err != nil {
			return nil, err
		}
	}

	var content *mimeNode
	if l.HasHTML {
		content = &mimeNode{body: segHTML}
		if rel != nil {
			rel.children = append(rel.children, content)
			for i := range l.Images {
				rel.children = append(rel.children, &mimeNode{file: &l.Images[i], inline: true})
			}
			content = rel
		}
	}
	if l.HasText {
		text := &mimeNode{body: segText}
		if alt != nil {
			alt.children = []*mimeNode{text, content}
			content = alt
		} else {
			content = text
		}
	}
	if mixed != nil {
		mixed.children = append(mixed.children, content)
		for i := range l.Attachments {
			mixed.children = append(mixed.children, &mimeNode{file: &l.Attachments[i]})
		}
		content = mixed
	}
	return content, nil
}

// newBoundary returns "=_", tag and 24 hex characters from rnd.
func newBoundary(rnd io.Reader, tag byte) (string, error) {
	var raw [12]byte
	if _, err := io.ReadFull(rnd, raw[:]); err != nil {
		return "", fmt.Errorf("postroom: reading random boundary: %w", err)
	}
	out := make([]byte, 3, 3+hex.EncodedLen(len(raw)))
	out[0], out[1], out[2] = '=', '_', tag
	return string(hex.AppendEncode(out, raw[:])), nil
}

// part writes n: its header fields, the empty line, and its body. The
// body of a multipart ends with its close delimiter, followed by CRLF only
// at the top (an inner part's last line is ended by the delimiter after it).
func (b *skelBuilder) part(n *mimeNode, top bool) error {
	switch {
	case n.multipart != "":
		params := map[string]string{"boundary": n.boundary}
		if n.multipart == "related" {
			params["type"] = "text/html"
		}
		if err := b.header("Content-Type", mime.FormatMediaType("multipart/"+n.multipart, params)); err != nil {
			return err
		}
		b.str("\r\n")
		for _, c := range n.children {
			b.str("--")
			b.str(n.boundary)
			b.str("\r\n")
			if err := b.part(c, false); err != nil {
				return err
			}
			b.str("\r\n")
		}
		b.str("--")
		b.str(n.boundary)
		b.str("--")
		if top {
			b.str("\r\n")
		}
	case n.file != nil:
		return b.file(n.file, n.inline)
	default:
		ct := "text/plain; charset=UTF-8"
		if n.body == segHTML {
			ct = "text/html; charset=UTF-8"
		}
		b.str("Content-Type: ")
		b.str(ct)
		b.str("\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n")
		b.slot(segment{kind: n.body, final: top})
	}
	return nil
}

// StaticTail returns the octets every message Append builds ends with:
// what follows the last per-recipient part (the images, the attachments
// and the closing boundaries), or nil when a per-recipient part ends the
// message. The bytes are read-only: the Skeleton's own when the tail is
// one segment, else a copy joining its segments (the files' Lines are
// segments of their own), made at each call. The DKIM signer leaves them
// out of its canonicalization where they are canonical as they are.
func (s *Skeleton) StaticTail() []byte {
	first := len(s.segs)
	for first > 0 && s.segs[first-1].kind == segStatic {
		first--
	}
	switch tail := s.segs[first:]; len(tail) {
	case 0:
		return nil
	case 1:
		return tail[0].data
	default:
		n := 0
		for _, seg := range tail {
			n += len(seg.data)
		}
		joined := make([]byte, 0, n)
		for _, seg := range tail {
			joined = append(joined, seg.data...)
		}
		return joined
	}
}
