package postroom

import (
	"context"
	"crypto/aes"
	"log/slog"

	"github.com/postroom/postroom/internal/dkim"
	"github.com/postroom/postroom/internal/htmltext"
	"github.com/postroom/postroom/internal/mimemsg"
)

// worker is one render goroutine's reusable state. Mailer.workers keeps
// them between calls, so that their buffers are grown once, not per call.
type worker struct {
	rb      renderBuffers
	msg     []byte
	signed  []byte // msg with its DKIM-Signature fields: msg is signed[room:]
	dkim    dkim.Scratch
	gen     []byte // the text generated from the html
	h2t     htmltext.Converter
	to      []string
	v       mimemsg.Varying
	env     Envelope
	in, out [aes.BlockSize]byte // send id scratch
}

// footprint is the bytes w's buffers hold: the render buffer (subject,
// bodies and header values), the generated text and the message (with
// room for its signatures), at their capacity.
func (w *worker) footprint() int {
	return cap(w.rb.out) + cap(w.gen) + cap(w.signed)
}

// keptBufferBytes is the most a worker's buffers keep between recipients
// (and, pooled, between calls): the buffers of a larger message are
// dropped once it is handed over, so that memory beyond what the
// recipients in flight hold (inflight.go) is garbage, not kept.
const keptBufferBytes = 1 << 20

// dropBuffers lets go of w's message-sized buffers.
func (w *worker) dropBuffers() {
	w.rb.out, w.rb.subject, w.rb.html, w.rb.text = nil, nil, nil, nil
	w.gen, w.signed, w.msg = nil, nil, nil
	w.env.Data = nil
}

// deliver makes recipient i's message and hands it over: build, then
// handOver, each returning the recipient's outcome, and one exit that
// turns the outcome into the Result. The error is the transport's, for the
// workers' loop (work) to notice ErrTransportUnusable.
func (j *job) deliver(ctx context.Context, i int, w *worker) (Result, error) {
	o := j.build(ctx, i, w)
	if o.status != "" {
		return j.resultOf(ctx, i, o, ""), nil
	}
	o, err := j.handOver(ctx, i, w)
	return j.resultOf(ctx, i, o, w.env.SendID), err
}

// build makes recipient i's message in w: its parts rendered, its header
// fields and MIME body written, signed, and its envelope in w.env. It
// returns the recipient's outcome when no message is made, else the zero
// outcome: the message in w.env is the one to hand over. Preview calls
// build alone; deliver calls build, then handOver.
func (j *job) build(ctx context.Context, i int, w *worker) outcome {
	r := &j.call.Recipients[i]
	addr := j.address(i)
	budget := j.m.opts.MaxMessageBytes - j.skel.StaticSize()
	if err := j.tpl.render(ctx, &w.rb, j.call.Message.Headers, r, j.call, j.m.opts.StrictParams, budget); err != nil {
		return outcomeOf(err)
	}
	if o := j.recipientUnsubscribe(w); o.status != "" {
		return o
	}
	if o := j.unsubscribeURL(w, addr); o.status != "" {
		return o
	}
	id := j.sendID(i, w)
	if o := j.appendMessage(w, r, addr, id); o.status != "" {
		return o
	}
	data := w.msg
	if j.dkim != nil {
		var err error
		if data, err = j.dkim.SignInPlace(&w.dkim, w.signed); err != nil {
			return outcome{status: StatusDeferred, code: ReasonNotSent, detail: "DKIM signing failed", err: err, logErr: true}
		}
	}
	w.to = append(append(w.to[:0], addr), j.bcc...)
	w.env = Envelope{SendID: id, From: j.envelopeFrom(id), To: w.to, Data: data}
	return outcome{}
}

// address is recipient i's address for SMTP use, as checkRecipients
// found it.
func (p *Prepared) address(i int) string {
	if addr, ok := p.normalized[i]; ok {
		return addr
	}
	return trimAddress(p.call.Recipients[i].Email)
}

// handOver passes the message build made in w to RunOptions.BeforeSend,
// when set, then to the transport, and returns the recipient's outcome and
// the transport's error.
func (j *job) handOver(ctx context.Context, i int, w *worker) (outcome, error) {
	if j.hooks.BeforeSend != nil {
		if err := j.hooks.BeforeSend(ctx, i, w.env.SendID); err != nil {
			return outcome{status: StatusDeferred, code: ReasonNotSent, detail: "kept back before sending", err: err, logErr: true}, nil
		}
	}
	err := j.m.t.Send(ctx, &w.env)
	return classify(err, j.m.queued), err
}

// resultOf is recipient i's Result for outcome o (sendID: the id of the
// message made, or ""). It logs the error behind o when the Result does
// not show it (a transport's network error, a template's failure): at
// warning level for a delivery, at debug level for an invalid recipient,
// whose cause is the call's content.
func (j *job) resultOf(ctx context.Context, i int, o outcome, sendID string) Result {
	email := j.call.Recipients[i].Email
	res := o.result(email, sendID)
	if !o.logErr || o.err == nil {
		return res
	}
	level := slog.LevelWarn
	if o.status == StatusInvalid {
		level = slog.LevelDebug
	}
	if log := j.m.opts.Logger; log.Enabled(ctx, level) {
		log.LogAttrs(ctx, level, "postroom recipient",
			slog.Int("recipient", i),
			slog.String("send_id", sendID),
			slog.String("status", string(o.status)),
			slog.String("reason", res.Reason),
			slog.Any("error", o.err))
	}
	return res
}
