package postroom

import (
	"context"
	"crypto/aes"
	"errors"
	"fmt"
	"log/slog"

	"github.com/postroom/postroom/internal/htmltext"
	"github.com/postroom/postroom/internal/mimemsg"
)

// worker is one render goroutine's reusable state. Mailer.workers keeps
// them between calls, so that their buffers are grown once, not per call.
type worker struct {
	rb      renderBuffers
	msg     []byte
	signed  []byte // msg with its DKIM-Signature fields: msg is signed[room:]
	dkim    dkimScratch
	gen     []byte // the text generated from the html
	h2t     htmltext.Converter
	to      []string
	v       mimemsg.Varying
	env     Envelope
	in, out [aes.BlockSize]byte // send id scratch
}

// deliver makes and hands over recipient i's message. The error is the
// transport's, for the caller to notice ErrTransportUnusable.
func (j *job) deliver(ctx context.Context, i int, w *worker) (Result, error) {
	r := &j.call.Recipients[i]
	res := Result{Email: r.Email}
	addr, ok := j.normalized[i]
	if !ok {
		addr = trimAddress(r.Email) // checked by checkRecipients
	}
	budget := j.m.opts.MaxMessageBytes - j.skel.StaticSize()
	if err := j.tpl.render(ctx, &w.rb, j.call.Message.Headers, r.Params, j.call.GlobalParams, j.m.opts.StrictParams, budget); err != nil {
		o := outcomeOf(err)
		if fromContext(err) {
			o = outcome{status: StatusDeferred, code: contextCode(err), err: err}
		}
		j.settle(ctx, i, &res, o)
		return res, nil
	}
	if o, ok := j.recipientUnsubscribe(w); !ok {
		j.settle(ctx, i, &res, o)
		return res, nil
	}
	id := j.sendID(i, w)
	switch err := j.appendMessage(w, r, addr, id); {
	case errors.Is(err, mimemsg.ErrTooLarge):
		j.settle(ctx, i, &res, invalid(ReasonMessageTooLarge, fmt.Sprintf("over %d bytes", j.m.opts.MaxMessageBytes)))
		return res, nil
	case err != nil:
		j.settle(ctx, i, &res, outcomeOf(err))
		return res, nil
	}
	data := w.msg
	if j.dkim != nil {
		var err error
		if data, err = j.dkim.signInPlace(&w.dkim, w.signed); err != nil {
			j.settle(ctx, i, &res, outcome{status: StatusDeferred, code: ReasonNotSent, detail: "DKIM signing failed", err: err, hidden: true})
			return res, nil
		}
	}
	w.to = append(append(w.to[:0], addr), j.bcc...)
	w.env = Envelope{SendID: id, From: j.envelopeFrom(id), To: w.to, Data: data}
	res.SendID = id
	if j.beforeSend != nil {
		if err := j.beforeSend(ctx, i, id); err != nil {
			if errors.Is(err, errPreviewed) {
				return res, nil // Mailer.Preview: the message stops here, made
			}
			j.settle(ctx, i, &res, outcome{status: StatusDeferred, code: ReasonNotSent, detail: "kept back before sending", err: err, hidden: true})
			return res, nil
		}
	}
	err := j.m.t.Send(ctx, &w.env)
	j.settle(ctx, i, &res, classify(err, j.m.queued))
	return res, err
}

// settle fills in res from recipient i's outcome, and logs the error
// behind it when the Result does not show it (a transport's network
// error, a template's failure): at warning level for a delivery, at debug
// level for an invalid recipient, whose cause is the call's content.
func (j *job) settle(ctx context.Context, i int, res *Result, o outcome) {
	*res = o.result(res.Email, res.SendID)
	if !o.hidden || o.err == nil {
		return
	}
	level := slog.LevelWarn
	if o.status == StatusInvalid {
		level = slog.LevelDebug
	}
	if log := j.m.opts.Logger; log.Enabled(ctx, level) {
		log.LogAttrs(ctx, level, "postroom recipient",
			slog.Int("recipient", i),
			slog.String("send_id", res.SendID),
			slog.String("status", string(o.status)),
			slog.String("reason", res.Reason),
			slog.Any("error", o.err))
	}
}
