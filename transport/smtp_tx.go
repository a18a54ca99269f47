package transport

import (
	"context"
	"fmt"
	"strconv"

	"github.com/postroom/postroom/delivery"
)

// txEnd is how a mail transaction ended, or a step of it that ended it:
// what Send returns for it, and what becomes of the connection.
type txEnd struct {
	// keep says whether the connection may serve another transaction.
	keep bool
	// stale says the connection failed before the server answered anything
	// in this transaction, so nothing can have been delivered and another
	// connection may be tried at once.
	stale bool
	err   error
}

// transact runs one mail transaction on c.
func (c *smtpConn) transact(ctx context.Context, env *delivery.Envelope, m *message) (out txEnd) {
	stop := context.AfterFunc(ctx, c.abortFn)
	defer func() {
		if !stop() {
			out.keep = false
			if out.err != nil {
				out.err = withCtx(ctx, out.err)
			}
		}
	}()
	if out, ok := c.check(env, m); !ok {
		return out
	}
	x := tx{c: c}
	if out, ok := x.envelope(env, m); !ok {
		return out
	}
	return x.body(m.data)
}

// check refuses, before anything is sent, a transaction that c cannot
// carry as it is.
func (c *smtpConn) check(env *delivery.Envelope, m *message) (txEnd, bool) {
	if c.dirty && c.unsolicited() {
		// Whatever the server sent since the last transaction would be
		// taken for the replies to this one's commands.
		return txEnd{stale: true, err: &delivery.DeliveryError{Err: fmt.Errorf("%w on an idle connection", ErrUnexpectedReply)}}, false
	}
	if m.eightBit && !c.ext.eightBitMIME {
		return txEnd{keep: true, err: &delivery.DeliveryError{Kind: delivery.DeliveryPermanent, Code: 554, Enhanced: "5.6.3",
			Text: "message has 8-bit bytes and the server does not offer 8BITMIME"}}, false
	}
	if c.ext.maxSize > 0 && int64(len(m.data)) > c.ext.maxSize {
		return txEnd{keep: true, err: &delivery.DeliveryError{Kind: delivery.DeliveryPermanent, Code: 552, Enhanced: "5.3.4",
			Text: fmt.Sprintf("message of %d bytes exceeds the server's SIZE %d", len(m.data), c.ext.maxSize)}}, false
	}
	if needUTF8(env) && !c.ext.utf8 {
		return txEnd{keep: true, err: &delivery.DeliveryError{Kind: delivery.DeliveryPermanent, Code: 553, Enhanced: "5.6.7",
			Text: "non-ASCII address and the server does not offer SMTPUTF8"}}, false
	}
	return txEnd{}, true
}

func needUTF8(env *delivery.Envelope) bool {
	need := !isASCII(env.From)
	for _, a := range env.To {
		need = need || !isASCII(a)
	}
	return need
}

// tx is one transaction's state between its envelope and its body.
type tx struct {
	c       *smtpConn
	replied bool // a reply of this transaction was read
	// mailErr and first are MAIL's and Envelope.To[0]'s refusals.
	mailErr, first *delivery.DeliveryError
	refused        []delivery.RefusedRecipient // bcc addresses refused
	// pipeData says DATA went with the envelope's pipeline.
	pipeData bool
}

func (x *tx) read() (int, string, error) {
	code, msg, err := readReply(x.c.br)
	if err == nil {
		x.replied = true
	}
	return code, msg, err
}

// netFail is the outcome of a connection lost or garbled before the end
// of data.
func (x *tx) netFail(err error) txEnd {
	if e := firstErr(x.mailErr, x.first); e != nil {
		// An earlier reply in the pipeline (such as 421, after which the
		// server closed) says more than the lost connection.
		return txEnd{err: e}
	}
	return txEnd{stale: !x.replied && !isProtocolError(err), err: &delivery.DeliveryError{Err: err}}
}

// envelope sends RSET (on a reused connection), MAIL and RCPT, and DATA
// when it goes in the same pipeline, and reads their replies. It says
// false with the transaction's outcome when the transaction ends there.
func (x *tx) envelope(env *delivery.Envelope, m *message) (txEnd, bool) {
	c := x.c
	c.uses++
	w := c.bw
	c.deadline(c.opts.CommandTimeout)
	rset := c.dirty
	c.dirty = true
	if rset {
		w.WriteString("RSET\r\n")
	}
	w.WriteString("MAIL FROM:<")
	w.WriteString(env.From)
	w.WriteString(">")
	if c.ext.sizeOffered {
		w.WriteString(" SIZE=")
		w.Write(strconv.AppendInt(c.num[:0], int64(len(m.data)), 10))
	}
	if m.eightBit {
		w.WriteString(" BODY=8BITMIME")
	}
	utf8 := needUTF8(env)
	if utf8 {
		w.WriteString(" SMTPUTF8")
	}
	w.WriteString("\r\n")
	// Without PIPELINING every command waits for its reply; with it, all go
	// at once, DATA too when there is a single recipient: the server then
	// refuses DATA itself if that RCPT failed (RFC 2920 §3.1). With bcc
	// addresses DATA waits, so that a refused Envelope.To[0] never meets a
	// 354. BDAT always waits for the RCPT replies: its chunk follows the
	// command at once, and must not go out for a refused recipient.
	pipelining := c.ext.pipelining
	x.pipeData = pipelining && len(env.To) == 1 && !c.chunking
	if pipelining {
		for _, a := range env.To {
			w.WriteString("RCPT TO:<")
			w.WriteString(a)
			w.WriteString(">\r\n")
		}
		if x.pipeData {
			w.WriteString("DATA\r\n")
		}
	}
	if err := c.flush(); err != nil {
		return x.netFail(err), false
	}
	if rset {
		code, msg, err := x.read()
		if err != nil {
			return x.netFail(err), false
		}
		if code/100 != 2 {
			// A server that refuses RSET is in no state to go on with.
			return txEnd{err: replyError(delivery.DeliveryTemporary, code, msg, c.ext.enhanced)}, false
		}
	}
	code, msg, err := x.read()
	if err != nil {
		return x.netFail(err), false
	}
	if code/100 != 2 {
		x.mailErr = replyError(replyKind(code), code, msg, c.ext.enhanced)
		if !pipelining {
			return txEnd{keep: code != 421 && code/100 != 1 && code/100 != 3, err: x.mailErr}, false
		}
	}
	for i, a := range env.To {
		if !pipelining {
			if x.first != nil {
				break
			}
			c.deadline(c.opts.CommandTimeout)
			w.WriteString("RCPT TO:<")
			w.WriteString(a)
			w.WriteString(">\r\n")
			if err := c.flush(); err != nil {
				return x.netFail(err), false
			}
		}
		code, msg, err := x.read()
		if err != nil {
			return x.netFail(err), false
		}
		if code/100 == 2 {
			continue
		}
		kind := replyKind(code)
		if code == 452 || code == 552 {
			kind = delivery.DeliveryTemporary // too many recipients (RFC 5321 §4.5.3.1.10)
		}
		de := replyError(kind, code, msg, c.ext.enhanced)
		if i == 0 {
			x.first = de
		} else {
			x.refused = append(x.refused, delivery.RefusedRecipient{Address: a, Err: de})
		}
	}
	if x.pipeData {
		code, msg, err := x.read()
		if err != nil {
			return x.netFail(err), false
		}
		if code == 354 {
			if x.mailErr != nil || x.first != nil {
				// The server wants the message although MAIL or the only
				// RCPT failed: cut the connection before any of it.
				return txEnd{err: firstErr(x.mailErr, x.first)}, false
			}
		} else if x.mailErr == nil && x.first == nil {
			return dataRefused(code, msg, c.ext.enhanced), false
		}
	}
	if e := firstErr(x.mailErr, x.first); e != nil {
		return txEnd{keep: e.Code != 421, err: e}, false
	}
	return txEnd{}, true
}

// body sends the message, with BDAT or after DATA, and reads the
// end-of-data reply.
func (x *tx) body(data []byte) txEnd {
	c := x.c
	if c.chunking {
		return c.bdat(data, x.refused)
	}
	w := c.bw
	if !x.pipeData {
		c.deadline(c.opts.CommandTimeout)
		w.WriteString("DATA\r\n")
		if err := c.flush(); err != nil {
			return x.netFail(err)
		}
		code, msg, err := x.read()
		if err != nil {
			return x.netFail(err)
		}
		if code != 354 {
			return dataRefused(code, msg, c.ext.enhanced)
		}
	}
	c.deadline(c.opts.DataTimeout)
	c.wire.trace.beginContent(0)
	err := writeData(w, data)
	if err == nil {
		err = c.flush()
	}
	c.wire.trace.endContent()
	if err != nil {
		return txEnd{err: &delivery.DeliveryError{Err: fmt.Errorf("writing message: %w", err)}}
	}
	// The final dot is on its way: from here on, no reply means the server
	// may have the message.
	c.deadline(c.opts.EndOfDataTimeout)
	code, msg, err := x.read()
	if err != nil {
		return txEnd{err: &delivery.DeliveryError{Kind: delivery.DeliveryUncertain, Err: fmt.Errorf("no reply after the final dot: %w", err)}}
	}
	return c.endOfDataReply(code, msg, x.refused)
}

// bdat sends data as one BDAT LAST chunk (RFC 3030) and reads the
// end-of-data reply. RFC 3030 puts no limit on a chunk's size, and one
// chunk is one round trip.
func (c *smtpConn) bdat(data []byte, refused []delivery.RefusedRecipient) txEnd {
	c.deadline(c.opts.DataTimeout)
	c.wire.trace.beginContent(1) // the BDAT command line, not the chunk
	writeBDAT(c.bw, c.num[:0], data)
	err := c.flush()
	c.wire.trace.endContent()
	if err != nil {
		return txEnd{err: &delivery.DeliveryError{Err: fmt.Errorf("writing message: %w", err)}}
	}
	// The whole chunk is written: from here on, no reply means the server
	// may have the message.
	c.deadline(c.opts.EndOfDataTimeout)
	code, msg, err := readReply(c.br)
	if err != nil {
		return txEnd{err: &delivery.DeliveryError{Kind: delivery.DeliveryUncertain, Err: fmt.Errorf("no reply to BDAT LAST: %w", err)}}
	}
	return c.endOfDataReply(code, msg, refused)
}

// endOfDataReply is how the transaction ends on the reply after the
// final dot or to BDAT LAST: 2xx delivered (to all, or with the bcc
// refusals in refused), 4xx and 5xx refused, anything else Uncertain. A
// server that has sent more than that reply is out of step: the reply may
// not have been this message's, so the outcome is Uncertain too.
func (c *smtpConn) endOfDataReply(code int, msg string, refused []delivery.RefusedRecipient) txEnd {
	if c.br.Buffered() > 0 {
		return txEnd{err: &delivery.DeliveryError{Kind: delivery.DeliveryUncertain, Err: fmt.Errorf("%w after the end-of-data reply %d", ErrUnexpectedReply, code)}}
	}
	switch code / 100 {
	case 2:
		if len(refused) > 0 {
			return txEnd{keep: true, err: &delivery.PartialError{Refused: refused}}
		}
		return txEnd{keep: true}
	case 4, 5:
		return txEnd{keep: code != 421, err: replyError(replyKind(code), code, msg, c.ext.enhanced)}
	}
	return txEnd{err: replyError(delivery.DeliveryUncertain, code, msg, c.ext.enhanced)}
}
