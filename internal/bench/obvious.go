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
	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/fixture"
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

	bufs sync.Pool // *bytes.Buffer
}

// obviousCall is one call, parsed: what Obvious computes once per call.
type obviousCall struct {
	msg                 *postroom.Message
	subject, html, text *raymond.Template
	headers             []*raymond.Template // nil for a value without "{{"
	images, attachments [][]byte
}

// Send sends one message per recipient of call. It returns the errors of
// the recipients that failed, joined; one recipient's failure does not stop
// the others.
func (o *Obvious) Send(ctx context.Context, call *postroom.Call) error {
	c, err := parseObvious(call)
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

func parseObvious(call *postroom.Call) (*obviousCall, error) {
	msg := &call.Message
	c := &obviousCall{msg: msg, headers: make([]*raymond.Template, len(msg.Headers))}
	var err error
	for _, t := range []struct {
		dst **raymond.Template
		src string
	}{{&c.subject, msg.Subject}, {&c.html, msg.HTML}, {&c.text, msg.Text}} {
		if *t.dst, err = raymond.Parse(t.src); err != nil {
			return nil, err
		}
	}
	for i, h := range msg.Headers {
		if strings.Contains(h.Value, "{{") {
			if c.headers[i], err = raymond.Parse(h.Value); err != nil {
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
	if p.Text, err = c.text.Exec(params); err != nil {
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
	buf, _ := o.bufs.Get().(*bytes.Buffer)
	if buf == nil {
		buf = new(bytes.Buffer)
	}
	defer o.bufs.Put(buf)
	buf.Reset()
	if err := writeGoMail(buf, c, &p, values, r); err != nil {
		return err
	}
	return o.Transport.Send(ctx, &postroom.Envelope{From: c.msg.FromEmail, To: []string{r.Email}, Data: buf.Bytes()})
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
