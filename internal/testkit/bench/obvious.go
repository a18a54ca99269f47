package bench

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"

	"github.com/aymerick/raymond"
	"github.com/emersion/go-msgauth/dkim"
	"github.com/k3a/html2text"
	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/testkit/fixture"
	"github.com/wneessen/go-mail"
	"golang.org/x/sync/errgroup"
)

// Obvious sends a call the way a Go program would without postroom, written
// plainly and without tricks: raymond parses each template once per call
// and Execs it per recipient over the global and recipient params merged
// into one map; each recipient gets a go-mail Msg (From, To, Subject, the
// custom headers, SetBodyString html, AddAlternativeString text, EmbedReader
// per image with its content id, AttachReader per attachment) written with
// WriteTo into a pooled buffer and handed to the Transport. Images and
// attachments are decoded from base64 once per call. Recipients run through
// an errgroup limited to Concurrency, as postroom's workers are.
//
// A call with html and no text gets the text part postroom would generate
// made the obvious way: k3a/html2text's HTML2Text of each recipient's
// rendered html. With DKIM set, each finished message is signed with
// go-msgauth's dkim.Sign into a second pooled buffer. With ParseOnce, the
// parsed templates are kept across calls, by source, as a server that
// sends the same templates again would keep them.
//
// It checks nothing postroom checks (addresses, duplicates, limits) and,
// like raymond, HTML-escapes the subject and text too: it is the baseline of
// the comparison, not a mailer.
//
// An Obvious is safe for concurrent use; its fields must not change while a
// Send runs, and it must not be copied after first use (it pools buffers).
// The zero value has no Transport and must not be used. Send never modifies
// the call, whose params must be what encoding/json decodes into
// map[string]any (fixture.PlainCall): raymond does not read
// postroom.Object.
type Obvious struct {
	// Transport receives every message. The Envelope's Data is reused after
	// Send returns, as with postroom.
	Transport postroom.Transport
	// Concurrency is the most recipients in flight at once; 0 means 1.
	Concurrency int
	// DKIM, when not nil, are the options every message is signed with
	// (go-msgauth's dkim.Sign); nil signs nothing.
	DKIM *dkim.SignOptions
	// ParseOnce keeps every template parsed in a map by its source, so that
	// a later call with the same source does not parse it again; false
	// parses each call's templates for that call.
	ParseOnce bool

	bufs   sync.Pool // *bytes.Buffer
	parsed sync.Map  // source string -> *raymond.Template, with ParseOnce
}

// obviousCall is one call, parsed: what Obvious computes once per call.
type obviousCall struct {
	msg                 *postroom.Message
	subject, html, text *raymond.Template   // text is nil when the call has none
	headers             []*raymond.Template // nil for a value without "{{"
	images, attachments [][]byte
}

// Send sends one message per recipient of call. It returns the errors of
// the recipients that failed, joined; one recipient's failure does not stop
// the others.
func (o *Obvious) Send(ctx context.Context, call *postroom.Call) error {
	c, err := parseObvious(call, o.parse)
	if err != nil {
		return err
	}
	errs := make([]error, len(call.Recipients))
	var g errgroup.Group
	g.SetLimit(max(1, o.Concurrency))
	for i := range call.Recipients {
		g.Go(func() error {
			errs[i] = o.one(ctx, c, call.GlobalParams, &call.Recipients[i])
			return nil
		})
	}
	_ = g.Wait()
	return errors.Join(errs...)
}

// parse is raymond.Parse, or with ParseOnce the template parsed before
// from the same source.
func (o *Obvious) parse(src string) (*raymond.Template, error) {
	if !o.ParseOnce {
		return raymond.Parse(src)
	}
	if t, ok := o.parsed.Load(src); ok {
		return t.(*raymond.Template), nil
	}
	t, err := raymond.Parse(src)
	if err != nil {
		return nil, err
	}
	o.parsed.Store(src, t)
	return t, nil
}

// parseObvious parses call's templates with parse and decodes its files.
func parseObvious(call *postroom.Call, parse func(string) (*raymond.Template, error)) (*obviousCall, error) {
	msg := &call.Message
	c := &obviousCall{msg: msg, headers: make([]*raymond.Template, len(msg.Headers))}
	var err error
	for _, t := range []struct {
		dst **raymond.Template
		src string
	}{{&c.subject, msg.Subject}, {&c.html, msg.HTML}, {&c.text, msg.Text}} {
		if t.src == "" && t.dst == &c.text {
			continue // made from the html per recipient
		}
		if *t.dst, err = parse(t.src); err != nil {
			return nil, err
		}
	}
	for i, h := range msg.Headers {
		if strings.Contains(h.Value, "{{") {
			if c.headers[i], err = parse(h.Value); err != nil {
				return nil, err
			}
		}
	}
	for _, img := range msg.Images {
		b, err := base64.StdEncoding.DecodeString(img.Content)
		if err != nil {
			return nil, fmt.Errorf("bench: image %s: %w", img.Name, err)
		}
		c.images = append(c.images, b)
	}
	for _, a := range msg.Attachments {
		b, err := base64.StdEncoding.DecodeString(a.Content)
		if err != nil {
			return nil, fmt.Errorf("bench: attachment %s: %w", a.Name, err)
		}
		c.attachments = append(c.attachments, b)
	}
	return c, nil
}

// one renders, builds and hands over one recipient's message.
func (o *Obvious) one(ctx context.Context, c *obviousCall, globals map[string]any, r *postroom.Recipient) error {
	params := make(map[string]any, len(globals)+len(r.Params))
	maps.Copy(params, globals)
	maps.Copy(params, r.Params)
	var p fixture.Parts
	var err error
	if p.Subject, err = c.subject.Exec(params); err != nil {
		return err
	}
	if p.HTML, err = c.html.Exec(params); err != nil {
		return err
	}
	if c.text == nil {
		p.Text = html2text.HTML2Text(p.HTML)
	} else if p.Text, err = c.text.Exec(params); err != nil {
		return err
	}
	values := make([]string, len(c.msg.Headers))
	for i, h := range c.msg.Headers {
		values[i] = h.Value
		if t := c.headers[i]; t != nil {
			if values[i], err = t.Exec(params); err != nil {
				return err
			}
		}
	}
	buf := o.buf()
	defer o.bufs.Put(buf)
	if err := writeGoMail(buf, c, &p, values, r); err != nil {
		return err
	}
	if o.DKIM != nil {
		signed := o.buf()
		defer o.bufs.Put(signed)
		if err := dkim.Sign(signed, bytes.NewReader(buf.Bytes()), o.DKIM); err != nil {
			return err
		}
		buf = signed
	}
	return o.Transport.Send(ctx, &postroom.Envelope{From: c.msg.FromEmail, To: []string{r.Email}, Data: buf.Bytes()})
}

// buf returns an empty buffer from the pool.
func (o *Obvious) buf() *bytes.Buffer {
	buf, _ := o.bufs.Get().(*bytes.Buffer)
	if buf == nil {
		buf = new(bytes.Buffer)
	}
	buf.Reset()
	return buf
}

// writeGoMail writes one recipient's message with go-mail, the obvious
// way: a new Msg, filled and written with WriteTo.
func writeGoMail(buf *bytes.Buffer, c *obviousCall, p *fixture.Parts, headerValues []string, r *postroom.Recipient) error {
	msg := c.msg
	m := mail.NewMsg()
	if err := m.FromFormat(msg.FromName, msg.FromEmail); err != nil {
		return err
	}
	if err := m.AddToFormat(r.Name, r.Email); err != nil {
		return err
	}
	if msg.ReplyToEmail != "" {
		if err := m.ReplyToFormat(msg.ReplyToName, msg.ReplyToEmail); err != nil {
			return err
		}
	}
	m.Subject(p.Subject)
	for i, h := range msg.Headers {
		m.SetGenHeader(mail.Header(h.Name), headerValues[i])
	}
	m.SetBodyString(mail.TypeTextHTML, p.HTML)
	m.AddAlternativeString(mail.TypeTextPlain, p.Text)
	for i, img := range msg.Images {
		if err := m.EmbedReader(img.Name, bytes.NewReader(c.images[i]),
			mail.WithFileContentID(img.CID), mail.WithFileContentType(mail.ContentType(img.ContentType))); err != nil {
			return err
		}
	}
	for i, a := range msg.Attachments {
		if err := m.AttachReader(a.Name, bytes.NewReader(c.attachments[i]),
			mail.WithFileContentType(mail.ContentType(a.ContentType))); err != nil {
			return err
		}
	}
	_, err := m.WriteTo(buf)
	return err
}
