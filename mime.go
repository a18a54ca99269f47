package postroom

// The message builder: from a prepared call and a rendered recipient to
// the values of internal/mimemsg, which lays out the call's messages once
// (its Skeleton) and writes each recipient's bytes. What a message looks
// like (its tree of parts, the order and encoding of its header fields,
// its bodies and files) is documented there; this file says which call
// field goes where, and makes the checks only the layout can make (see
// layout).
//
// The text/plain alternative is generated from the html for calls that
// give html and no text (generatesText, text): a message of html alone is
// what spam filters score against (SpamAssassin's MIME_HTML_ONLY), and a
// reader of plain-text mail sees nothing of it.

import (
	"errors"
	"fmt"
	"strings"

	"github.com/postroom/postroom/internal/mimemsg"
)

// layout builds the call's Layout: everything its messages share but the
// Date, which each run stamps (seal), and the check only the layout can
// make: the custom header values that are the same for every recipient
// (checkStaticValues). The header values are left out when c says the
// headers are not fit, or when the templates did not compile (p.tpl nil).
// It reads p and writes nothing to it.
func (p *Prepared) layout(html, text templateSource, c *checked) (*mimemsg.Layout, []error) {
	msg := &p.call.Message
	l := &mimemsg.Layout{
		FromName: msg.FromName, FromAddr: p.from,
		ReplyToName: msg.ReplyToName, ReplyToAddr: c.replyTo,
		HasHTML: html.src != "", HasText: text.src != "" || p.genText,
		Images: c.images, Attachments: c.attachments,
		MaxSize: p.m.opts.MaxMessageBytes,
	}
	var errs []error
	if c.headers && p.tpl != nil {
		l.Headers = customHeaders(msg.Headers, p.tpl)
		errs = checkStaticValues(l.Headers)
	}
	if p.addUnsubscribe {
		l.Headers = addUnsubscribe(l.Headers)
	}
	return l, errs
}

// customHeaders are the call's custom header fields for the layout: a
// header whose value has no placeholder is static, its value written once
// per call; the others get their value per recipient.
func customHeaders(headers []Header, tpl *templates) []mimemsg.Header {
	out := make([]mimemsg.Header, len(headers))
	for i, h := range headers {
		out[i] = mimemsg.Header{Name: h.Name, Dynamic: tpl.headers[i] != nil}
		if !out[i].Dynamic {
			out[i].Value = tpl.headerStatic[i]
			// A List-Id was checked ASCII and of RFC 2919's shape
			// (listid.go): its phrase may be encoded words already.
			out[i].Structured = strings.EqualFold(h.Name, listIDHeader)
		}
	}
	return out
}

// checkStaticValues checks that the custom header values that are the
// same for every recipient can be written: an ASCII value with a run of
// about 990 octets without white space cannot be folded within a line's
// 998 octets (RFC 5322 §2.1.1). The values that vary are checked per
// recipient (render-error).
func checkStaticValues(headers []mimemsg.Header) []error {
	var errs []error
	var scratch []byte
	for i, h := range headers {
		if h.Dynamic {
			continue
		}
		var err error
		if scratch, err = mimemsg.AppendValue(scratch[:0], h); err != nil {
			errs = append(errs, &ValidationError{Field: fmt.Sprintf("message.headers[%d].value", i), Reason: "cannot be folded within 998-octet lines: a run without white space is too long"})
		}
	}
	return errs
}

// appendMessage writes recipient r's message into w.msg, from the parts
// rendered into w.rb: addr is its address for the To field, id its send
// id. It returns the recipient's outcome when the message cannot be
// written (over Options.MaxMessageBytes, or a value that cannot be
// folded), else the zero outcome.
func (j *job) appendMessage(w *worker, r *Recipient, addr, id string) outcome {
	w.v = mimemsg.Varying{
		ToName: r.Name, ToAddr: addr,
		Subject:      string(w.rb.subject),
		MessageID:    "<" + id + "@" + j.fromDomain + ">",
		HeaderValues: w.rb.headerVals,
		Text:         j.text(w), HTML: w.rb.html,
	}
	// The message goes after room for its DKIM-Signature fields, which
	// are then written in place (dkim.Call.SignInPlace).
	buf, err := j.skel.Append(j.dkim.Reserve(w.signed), &w.v)
	switch {
	case errors.Is(err, mimemsg.ErrTooLarge):
		return invalid(ReasonMessageTooLarge, fmt.Sprintf("over %d bytes", j.m.opts.MaxMessageBytes))
	case err != nil:
		return outcomeOf(err) // a *mimemsg.FieldError
	}
	w.signed, w.msg = buf, buf[j.dkim.Room():]
	return outcome{}
}

// generatesText reports whether the messages of a call with the given
// parts get a generated text part: html without text, unless
// Options.HTMLOnly.
func (m *Mailer) generatesText(hasHTML, hasText bool) bool {
	return hasHTML && !hasText && !m.opts.HTMLOnly
}

// text returns the text body of w's recipient: the rendered text, or the
// text generated from the rendered html when the call generates it, in
// w's buffer.
func (j *job) text(w *worker) []byte {
	if !j.genText {
		return w.rb.text
	}
	w.gen = w.h2t.Append(w.gen[:0], w.rb.html)
	return w.gen
}
