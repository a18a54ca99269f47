package postroom

// The message builder: from a prepared call and a rendered recipient to
// the values of internal/mimemsg, which lays out the call's messages once
// (its Skeleton) and writes each recipient's bytes. What a message looks
// like (its tree of parts, the order and encoding of its header fields,
// its bodies and files) is documented there; this file only says which
// call field goes where.

import (
	"github.com/postroom/postroom/internal/mimemsg"
)

// layout is what the call's messages share, but for the custom headers
// and the files, which prepare adds as it checks them, and the Date.
func (j *job) layout(html, text templateSource) *mimemsg.Layout {
	msg := &j.call.Message
	l := &mimemsg.Layout{
		FromName: msg.FromName, FromAddr: j.from,
		ReplyToName: msg.ReplyToName,
		HasHTML:     html.src != "", HasText: text.src != "",
		MaxSize: j.m.opts.MaxMessageBytes,
	}
	if msg.ReplyToEmail != "" {
		l.ReplyToAddr, _ = parseAddress(trimAddress(msg.ReplyToEmail)) // checked in checkStructure
	}
	return l
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
		}
	}
	return out
}

// appendMessage writes recipient r's message into w.msg, from the parts
// rendered into w.rb: addr is its address for the To field, id its send
// id. The error is mimemsg's: ErrTooLarge, or a *FieldError for a value
// that cannot be folded.
func (j *job) appendMessage(w *worker, r *Recipient, addr, id string) error {
	w.v = mimemsg.Varying{
		ToName: r.Name, ToAddr: addr,
		Subject:      string(w.rb.subject),
		MessageID:    "<" + id + "@" + j.fromDomain + ">",
		HeaderValues: w.rb.headerVals,
		Text:         j.text(w), HTML: w.rb.html,
	}
	// The message goes after room for its DKIM-Signature fields, which
	// are then written in place (dkimCall.signInPlace).
	buf, err := j.skel.Append(j.dkim.reserve(w.signed), &w.v)
	w.signed, w.msg = buf, buf[j.dkim.room():]
	return err
}
