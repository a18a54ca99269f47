package transport

import (
	"context"
	"fmt"
	"strconv"

	"github.com/postroom/postroom"
)

// transact runs one mail transaction on c. keep says whether c may serve
// another; stale says the connection failed before the server answered
// anything in this transaction, so nothing can have been delivered and
// another connection may be tried at once.
func (c *smtpConn) transact(ctx context.Context, env *postroom.Envelope, m *message) (keep, stale bool, err error) {
	stop := context.AfterFunc(ctx, c.abortFn)
	defer func() {
		if !stop() {
			keep = false
			if err != nil {
				err = withCtx(ctx, err)
			}
		}
	}()
	return c.run(env, m)
}

func (c *smtpConn) run(env *postroom.Envelope, m *message) (keep, stale bool, err error) {
	o := c.opts
	if c.dirty && c.unsolicited() {
		// Whatever the server sent since the last transaction would be
		// taken for the replies to this one's commands.
		return false, true, &postroom.DeliveryError{Err: fmt.Errorf("%w on an idle connection", ErrUnexpectedReply)}
	}
	data := m.data
	if m.eightBit && !c.ext.eightBitMIME {
		return true, false, &postroom.DeliveryError{Permanent: true, Code: 554, Enhanced: "5.6.3",
			Text: "message has 8-bit bytes and the server does not offer 8BITMIME"}
	}
	if c.ext.maxSize > 0 && int64(len(data)) > c.ext.maxSize {
		return true, false, &postroom.DeliveryError{Permanent: true, Code: 552, Enhanced: "5.3.4",
			Text: fmt.Sprintf("message of %d bytes exceeds the server's SIZE %d", len(data), c.ext.maxSize)}
	}
	needUTF8 := !isASCII(env.From)
	for _, a := range env.To {
		needUTF8 = needUTF8 || !isASCII(a)
	}
	if needUTF8 && !c.ext.utf8 {
		return true, false, &postroom.DeliveryError{Permanent: true, Code: 553, Enhanced: "5.6.7",
			Text: "non-ASCII address and the server does not offer SMTPUTF8"}
	}
	c.uses++
	w := c.bw
	c.deadline(o.CommandTimeout)
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
		w.Write(strconv.AppendInt(c.num[:0], int64(len(data)), 10))
	}
	if m.eightBit {
		w.WriteString(" BODY=8BITMIME")
	}
	if needUTF8 {
		w.WriteString(" SMTPUTF8")
	}
	w.WriteString("\r\n")
	// Without PIPELINING every command waits for its reply; with it, all go
	// at once, DATA too when there is a single recipient: the server then
	// refuses DATA itself if that RCPT failed (RFC 2920 §3.1). With bcc
	// addresses DATA waits, so that a refused Envelope.To[0] never meets a
	// 354. BDAT always waits for the RCPT replies: its chunk follows the
	// command at once, and must not go out for a refused recipient.
	pipeData := c.ext.pipelining && len(env.To) == 1 && !c.chunking
	replied := false
	read := func() (int, string, error) {
		code, msg, err := readReply(c.br)
		if err == nil {
			replied = true
		}
		return code, msg, err
	}
	var mailErr, first *postroom.DeliveryError
	netFail := func(err error) (bool, bool, error) {
		if e := firstErr(mailErr, first); e != nil {
			// An earlier reply in the pipeline (such as 421, after which
			// the server closed) says more than the lost connection.
			return false, false, e
		}
		return false, !replied && !isProtocolError(err), &postroom.DeliveryError{Err: err}
	}
	if c.ext.pipelining {
		for _, a := range env.To {
			w.WriteString("RCPT TO:<")
			w.WriteString(a)
			w.WriteString(">\r\n")
		}
		if pipeData {
			w.WriteString("DATA\r\n")
		}
	}
	if err := c.flush(); err != nil {
		return netFail(err)
	}
	if rset {
		code, msg, err := read()
		if err != nil {
			return netFail(err)
		}
		if code/100 != 2 {
			// A server that refuses RSET is in no state to go on with.
			de := replyError(code, msg, c.ext.enhanced)
			de.Permanent = false
			return false, false, de
		}
	}
	code, msg, err := read()
	if err != nil {
		return netFail(err)
	}
	if code/100 != 2 {
		mailErr = replyError(code, msg, c.ext.enhanced)
		if !c.ext.pipelining {
			return code != 421 && code/100 != 1 && code/100 != 3, false, mailErr
		}
	}
	var refused []postroom.RefusedRecipient
	for i, a := range env.To {
		if !c.ext.pipelining {
			if first != nil {
				break
			}
			c.deadline(o.CommandTimeout)
			w.WriteString("RCPT TO:<")
			w.WriteString(a)
			w.WriteString(">\r\n")
			if err := c.flush(); err != nil {
				return netFail(err)
			}
		}
		code, msg, err := read()
		if err != nil {
			return netFail(err)
		}
		if code/100 == 2 {
			continue
		}
		de := replyError(code, msg, c.ext.enhanced)
		if code == 452 || code == 552 {
			de.Permanent = false // too many recipients (RFC 5321 §4.5.3.1.10)
		}
		if i == 0 {
			first = de
		} else {
			refused = append(refused, postroom.RefusedRecipient{Address: a, Err: de})
		}
	}
	if pipeData {
		code, msg, err := read()
		if err != nil {
			return netFail(err)
		}
		if code == 354 {
			if mailErr != nil || first != nil {
				// The server wants the message although MAIL or the only
				// RCPT failed: cut the connection before any of it.
				return false, false, firstErr(mailErr, first)
			}
		} else if mailErr == nil && first == nil {
			return dataError(code, msg, c.ext.enhanced)
		}
	}
	if mailErr != nil || first != nil {
		e := firstErr(mailErr, first)
		return e.Code != 421, false, e
	}
	if c.chunking {
		return c.bdat(data, refused)
	}
	if !pipeData {
		c.deadline(o.CommandTimeout)
		w.WriteString("DATA\r\n")
		if err := c.flush(); err != nil {
			return netFail(err)
		}
		code, msg, err := read()
		if err != nil {
			return netFail(err)
		}
		if code != 354 {
			return dataError(code, msg, c.ext.enhanced)
		}
	}

	c.deadline(o.DataTimeout)
	if err := writeData(w, data); err != nil {
		return false, false, &postroom.DeliveryError{Err: fmt.Errorf("writing message: %w", err)}
	}
	if err := c.flush(); err != nil {
		return false, false, &postroom.DeliveryError{Err: fmt.Errorf("writing message: %w", err)}
	}
	// The final dot is on its way: from here on, no reply means the server
	// may have the message.
	c.deadline(o.EndOfDataTimeout)
	code, msg, err = read()
	if err != nil {
		return false, false, &postroom.DeliveryError{Uncertain: true, Err: fmt.Errorf("no reply after the final dot: %w", err)}
	}
	return c.endOfData(code, msg, refused)
}

// bdat sends data as one BDAT LAST chunk (RFC 3030) and reads the
// end-of-data reply. RFC 3030 puts no limit on a chunk's size, and one
// chunk is one round trip.
func (c *smtpConn) bdat(data []byte, refused []postroom.RefusedRecipient) (keep, stale bool, err error) {
	c.deadline(c.opts.DataTimeout)
	writeBDAT(c.bw, c.num[:0], data)
	if err := c.flush(); err != nil {
		return false, false, &postroom.DeliveryError{Err: fmt.Errorf("writing message: %w", err)}
	}
	// The whole chunk is written: from here on, no reply means the server
	// may have the message.
	c.deadline(c.opts.EndOfDataTimeout)
	code, msg, err := readReply(c.br)
	if err != nil {
		return false, false, &postroom.DeliveryError{Uncertain: true, Err: fmt.Errorf("no reply to BDAT LAST: %w", err)}
	}
	return c.endOfData(code, msg, refused)
}

// endOfData is the outcome of the reply after the final dot or to BDAT
// LAST. A server that has sent more than that reply is out of step: the
// reply may not have been this message's, so the outcome is Uncertain.
func (c *smtpConn) endOfData(code int, msg string, refused []postroom.RefusedRecipient) (keep, stale bool, err error) {
	if c.br.Buffered() > 0 {
		return false, false, &postroom.DeliveryError{Uncertain: true, Err: fmt.Errorf("%w after the end-of-data reply %d", ErrUnexpectedReply, code)}
	}
	return endOfData(code, msg, c.ext.enhanced, refused)
}
