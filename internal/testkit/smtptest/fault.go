package smtptest

import (
	"strconv"
	"strings"
	"time"

	"github.com/emersion/go-smtp"
)

// Stage names the point of an SMTP session a Fault applies to.
type Stage int

// The stages of a session, in the order a client meets them.
const (
	// Greeting is the server's opening reply (220). Faults here need a
	// plaintext connection (TLSNone or TLSStartTLS).
	Greeting Stage = iota + 1
	// Hello is the reply to EHLO or HELO.
	Hello
	// Auth is the reply to AUTH, once the credentials are read. Command.Addr
	// is the user name.
	Auth
	// Mail is the reply to MAIL FROM. Command.Addr is the reverse path.
	Mail
	// Rcpt is the reply to RCPT TO. Command.Addr is the address.
	Rcpt
	// Data is the reply to the DATA command (354), or to each BDAT command
	// (RFC 3030). For BDAT a scripted reply answers the command at once and
	// its chunk is read and thrown away; Drop closes the connection before
	// the chunk is read; Delay delays the reply to the command, which for
	// BDAT LAST is the end-of-data reply. Faults here need a plaintext
	// connection: they are applied below go-smtp, which always answers DATA
	// and BDAT itself.
	Data
	// Body is the transfer of the message text: after 354, or the BDAT
	// chunks' bytes. Drop resets the connection once Fault.AfterBytes bytes
	// of it are read; Delay waits before reading any of it.
	Body
	// EndOfData is the reply after the final dot, or to the BDAT LAST
	// chunk. Drop closes the connection once the whole message is read,
	// without a reply; the message stays in the ledger with Message.Cut
	// set, as a real server may have queued it.
	EndOfData
	// Reset is the reply to RSET. Faults here need a plaintext connection.
	Reset
	// StartTLS is the reply to STARTTLS (with Options.TLS TLSStartTLS).
	// A Code or Raw reply replaces go-smtp's 220, after which the session
	// goes on in plaintext (Raw closes it); Fault.Inject adds plaintext
	// after the 220, before the handshake.
	StartTLS
)

var stageNames = [...]string{"", "greeting", "hello", "auth", "mail", "rcpt", "data", "body", "end-of-data", "reset", "starttls"}

// String returns the stage's lower-case name.
func (s Stage) String() string {
	if s > 0 && int(s) < len(stageNames) {
		return stageNames[s]
	}
	return "stage(" + strconv.Itoa(int(s)) + ")"
}

// Command is what the server is about to answer; Options.Faults decides the
// answer from it.
type Command struct {
	Stage Stage
	// Addr is the address the command is about: for Rcpt the recipient, for
	// Data, Body and EndOfData the transaction's first accepted recipient, for
	// Mail the reverse path, for Auth the user name; "" otherwise.
	Addr string
	// Attempt counts, from 1, how many times the server has reached this
	// Stage with this Addr, this time included. Together with Addr it lets a
	// script fail the first attempt and let the retry through,
	// deterministically under any concurrency.
	Attempt int
	// Conn is the connection's number, from 1, in the order accepted.
	Conn int
}

// Fault is the server's scripted answer to one Command, in the manner of
// Postfix's smtp-sink. The zero Fault means "answer normally".
//
// At most one of Drop, Raw and Code applies, in that order; Delay applies
// before any of them, and also delays a normal answer.
type Fault struct {
	// Code is the reply code to send instead of the normal reply, with
	// Enhanced ("4.7.0"; empty means X.0.0) and Text.
	Code     int
	Enhanced string
	Text     string
	// Close closes the connection right after the Code reply, as a server
	// does after 421.
	Close bool
	// Drop closes the connection without any reply. At Body the connection
	// is reset (RST) after AfterBytes bytes of the message text; at
	// EndOfData it is closed after the whole message was read.
	Drop bool
	// AfterBytes is, for Drop at Body, how much of the message text the
	// server reads first.
	AfterBytes int
	// Raw is sent as is, followed by CRLF, instead of the reply (a malformed
	// reply such as "hello" or "2x0 ok"); then the connection is closed.
	Raw string
	// Delay is how long the server waits before answering (for Body: before
	// reading the message text).
	Delay time.Duration
	// Inject, at StartTLS only, is sent as is right after the 220 reply,
	// in the same write and before the TLS handshake: the plaintext a man
	// in the middle adds so that the client reads it as if it came under
	// TLS (the STARTTLS injection of CVE-2011-0411, here on the reply
	// side). It must end in CRLF to look like reply lines.
	Inject string
}

// smtpError is f's reply as a go-smtp error.
func (f Fault) smtpError() *smtp.SMTPError {
	e := &smtp.SMTPError{Code: f.Code, Message: f.Text, EnhancedCode: smtp.EnhancedCodeNotSet}
	if e.Message == "" {
		e.Message = "scripted reply"
	}
	if ec, ok := parseEnhanced(f.Enhanced); ok {
		e.EnhancedCode = ec
	}
	return e
}

// line is f's reply as a wire line, with CRLF.
func (f Fault) line() []byte {
	if f.Raw != "" {
		return []byte(f.Raw + "\r\n")
	}
	e := f.smtpError()
	ec := e.EnhancedCode
	if ec == smtp.EnhancedCodeNotSet {
		ec = smtp.EnhancedCode{f.Code / 100, 0, 0}
	}
	s := strconv.Itoa(f.Code) + " "
	if c := f.Code / 100; c == 2 || c == 4 || c == 5 {
		s += strconv.Itoa(ec[0]) + "." + strconv.Itoa(ec[1]) + "." + strconv.Itoa(ec[2]) + " "
	}
	return []byte(s + e.Message + "\r\n")
}

func parseEnhanced(s string) (smtp.EnhancedCode, bool) {
	var ec smtp.EnhancedCode
	parts := strings.Split(s, ".")
	if len(parts) != 3 {
		return ec, false
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil {
			return ec, false
		}
		ec[i] = n
	}
	return ec, true
}
