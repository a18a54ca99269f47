package postroom

import (
	"bytes"
	"context"
	"fmt"
	"mime"
	"slices"
)

// PreviewOptions choose what Mailer.Preview renders. The zero value
// previews every recipient without their message bytes.
type PreviewOptions struct {
	// Recipients are the indices in call.Recipients to preview, in the
	// order Preview.Recipients lists them. Nil or empty: every recipient.
	// An index out of range fails the preview.
	Recipients []int

	// Message asks for each previewed recipient's complete message, as the
	// transport would receive it, in PreviewRecipient.Message. False:
	// Message is nil.
	Message bool
}

// Preview is what a call would send, made by Mailer.Preview without any
// Transport call. It is owned by the caller.
type Preview struct {
	// Parts lists, for each template part of the call (subject, html,
	// text, then each header value, in that order; a body the message does
	// not have is left out), the params it references: Postmark's
	// SuggestedTemplateModel, SES's MissingRenderingAttribute.
	Parts []PartParams

	// Recipients holds one entry per previewed recipient, in the order of
	// PreviewOptions.Recipients (input order when that is empty).
	Recipients []PreviewRecipient
}

// PartParams are the params one template part references.
type PartParams struct {
	// Field is the part's field in the call, as a ValidationError names it:
	// "message.subject", "message.html" (or "message.html_template_id" for
	// message.send_template), "message.text" (or
	// "message.text_template_id"), "message.headers[2].value".
	Field string

	// Params are the referenced paths, sorted, written from the root of the
	// params: inside {{#each items}}, {{name}} is "items.name". A static
	// part has none.
	Params []string
}

// PreviewRecipient is one recipient's message as Run would make it.
type PreviewRecipient struct {
	// Index is the recipient's index in call.Recipients.
	Index int

	// Result is the recipient's Result as it would be when its message is
	// handed over: StatusInvalid with its Code and Reason when no message
	// would be made, else the status it would get from a transport that
	// accepts it (StatusSent, or StatusQueued for a Queuer that queues),
	// with the SendID of this preview (a real call draws new ones).
	Result Result

	// Subject, HTML and Text are the rendered parts, before any MIME
	// encoding; empty when the recipient is invalid before rendering (an
	// address refused, a duplicate) or its render failed.
	Subject, HTML, Text string

	// Headers are the message's header fields in order, each value
	// unfolded and with its encoded words decoded; nil when no message
	// would be made.
	Headers []Header

	// EnvelopeFrom and EnvelopeTo are the envelope the transport would
	// get (Envelope.From and Envelope.To): the reverse path (a VERP address
	// when Options.VERP is set) and the recipient's address followed by
	// the call's bcc addresses, which appear in no header field. Empty
	// when no message would be made.
	EnvelopeFrom string
	EnvelopeTo   []string

	// Message is the complete message (CRLF lines, as the transport would
	// receive it in Envelope.Data) when PreviewOptions.Message is set and
	// a message would be made; else nil.
	Message []byte

	// Missing are the params the recipient's render found absent (output
	// mustaches only, as Options.StrictParams counts them), sorted, whether
	// or not StrictParams is set. With StrictParams they make the
	// recipient invalid (missing-param).
	Missing []string
}

// Preview takes call as operation op through everything Run does before
// handing a message over (auth, validation, stored templates, rendering,
// MIME, DKIM signing) and returns, for each recipient chosen by opts,
// what would be sent, without any Transport call and without RunOptions
// hooks: Prepare, then the Prepared's Preview.
//
// A call refused as a whole returns the same errors as Run
// (ErrUnauthorized, ErrNoRecipients, ErrTooManyRecipients,
// *ValidationError, possibly joined) and no Preview. When ctx is done,
// Preview returns ctx's error and no Preview.
//
// Preview renders in the calling goroutine, one recipient after another,
// and keeps every previewed recipient's parts (and messages, when asked):
// choose a few recipients of a large call with opts.Recipients. Like a call,
// it reads 40 bytes of Options.Rand; with the same Options.Rand and
// Options.Now as a Run, its messages are byte for byte the ones that Run
// hands over.
func (m *Mailer) Preview(ctx context.Context, op Operation, call *Call, opts PreviewOptions) (*Preview, error) {
	p, err := m.prepare(ctx, op, call, true)
	if err != nil {
		return nil, err
	}
	return p.Preview(ctx, opts)
}

// Preview is what a run of p would send to the recipients opts chooses,
// as Mailer.Preview describes it. Like a run, it draws its own keys and
// Date (a run's send ids and Date are not the preview's): with the same
// Options.Rand and Options.Now as a run of every recipient, its messages
// are byte for byte the ones that run hands over.
func (p *Prepared) Preview(ctx context.Context, opts PreviewOptions) (*Preview, error) {
	if err := p.made(); err != nil {
		return nil, err
	}
	n := len(p.call.Recipients)
	for _, i := range opts.Recipients {
		if i < 0 || i >= n {
			return nil, fmt.Errorf("postroom: Preview: recipient index %d out of range: the call has %d recipients", i, n)
		}
	}
	indices := opts.Recipients
	if len(indices) == 0 {
		indices = make([]int, n)
		for i := range indices {
			indices[i] = i
		}
	}
	j, err := p.seal(indices, RunOptions{})
	if err != nil {
		return nil, err
	}
	results := make([]Result, len(indices))
	for k, i := range indices {
		results[k] = p.checks[i]
	}
	if err := j.suppress(ctx, results); err != nil {
		return nil, err
	}
	pv := &Preview{Parts: p.tpl.params(p.op, p.call.Message.Headers), Recipients: make([]PreviewRecipient, 0, len(indices))}
	w := new(worker)
	for k, i := range indices {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		pr := PreviewRecipient{Index: i, Result: results[k]}
		if pr.Result.Status != "" {
			pv.Recipients = append(pv.Recipients, pr)
			continue
		}
		w.rb.subject, w.rb.html, w.rb.text = nil, nil, nil
		w.rb.data.Missing = w.rb.data.Missing[:0]
		o := j.build(ctx, i, w)
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		pr.Subject, pr.HTML, pr.Text = string(w.rb.subject), string(w.rb.html), string(w.rb.text)
		if len(w.rb.data.Missing) > 0 {
			pr.Missing = slices.Compact(slices.Sorted(slices.Values(w.rb.data.Missing)))
		}
		if o.status != "" {
			pr.Result = j.resultOf(ctx, i, o, "")
		} else {
			// Made: the Result a transport that accepts it would give.
			pr.Result = j.resultOf(ctx, i, classify(nil, p.m.queued), w.env.SendID)
			pr.Headers = headerFields(w.env.Data)
			pr.EnvelopeFrom, pr.EnvelopeTo = w.env.From, slices.Clone(w.env.To)
			if opts.Message {
				pr.Message = slices.Clone(w.env.Data)
			}
		}
		pv.Recipients = append(pv.Recipients, pr)
	}
	return pv, nil
}

// params lists the params of each part of t.
func (t *templates) params(op Operation, headers []Header) []PartParams {
	html, text := "message.html", "message.text"
	if op == OpSendTemplate {
		html, text = "message.html_template_id", "message.text_template_id"
	}
	parts := []PartParams{{Field: "message.subject", Params: t.subject.Params()}}
	if t.html != nil {
		parts = append(parts, PartParams{Field: html, Params: t.html.Params()})
	}
	if t.text != nil {
		parts = append(parts, PartParams{Field: text, Params: t.text.Params()})
	}
	for i := range headers {
		pp := PartParams{Field: fmt.Sprintf("message.headers[%d].value", i)}
		if t.headers[i] != nil {
			pp.Params = t.headers[i].Params()
		}
		parts = append(parts, pp)
	}
	return parts
}

// headerFields reads the header section of msg: each field's name and
// value, unfolded, with encoded words decoded (a word in a charset the
// decoder does not know stays as written).
func headerFields(msg []byte) []Header {
	head, _, _ := bytes.Cut(msg, []byte("\r\n\r\n"))
	var fields []Header
	var dec mime.WordDecoder
	for line := range bytes.SplitSeq(head, []byte("\r\n")) {
		if len(line) > 0 && (line[0] == ' ' || line[0] == '\t') && len(fields) > 0 {
			fields[len(fields)-1].Value += string(line)
			continue
		}
		name, value, _ := bytes.Cut(line, []byte(":"))
		fields = append(fields, Header{Name: string(name), Value: string(value)})
	}
	for i := range fields {
		v := string(bytes.TrimSpace([]byte(fields[i].Value)))
		if d, err := dec.DecodeHeader(v); err == nil {
			v = d
		}
		fields[i].Value = v
	}
	return fields
}
