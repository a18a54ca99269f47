package transport

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"sync"
	"time"
)

// smtpConn is one session with the server, used by one goroutine at a time
// (its owner, see pool). Every command of the session, from the greeting
// on, goes through bw (one buffer, flushed once per round trip) and every
// reply through br, read by readReply within its bounds.
type smtpConn struct {
	opts *SMTPOptions
	raw  net.Conn // the TCP connection, whose deadlines govern TLS too
	br   *bufio.Reader
	bw   *bufio.Writer
	peek *peeker // into raw, for unsolicited
	id   uint64  // from 1, in the order dialed: "conn" in log records
	wire wire    // what br and bw report to

	tls bool
	ext extensions
	// chunking is ext.chunking unless DisableChunking: BDAT.
	chunking bool
	num      [20]byte // scratch for numbers on the wire

	uses      int // transactions started
	dirty     bool
	idleSince time.Time
	idleTimer *time.Timer

	mu      sync.Mutex
	aborted bool   // ctx was done: the deadline stays in the past
	abortFn func() // abort, bound once rather than once per transaction
}

// newConn wraps a dialed connection, number id, whose bytes go through w.
func newConn(raw net.Conn, opts *SMTPOptions, id uint64, w wire) *smtpConn {
	c := &smtpConn{raw: raw, opts: opts, br: newReader(w.reader(raw)), bw: bufio.NewWriterSize(w.writer(raw), 64<<10), peek: newPeeker(raw), id: id, wire: w}
	c.abortFn = c.abort
	return c
}

// deadline sets the connection's deadline d from now, unless a done ctx
// has aborted it.
func (c *smtpConn) deadline(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.aborted {
		return
	}
	_ = c.raw.SetDeadline(time.Now().Add(d))
}

// abort makes every blocked and future read and write fail at once. It
// runs from context.AfterFunc when a Send's ctx is done.
func (c *smtpConn) abort() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.aborted = true
	_ = c.raw.SetDeadline(time.Unix(1, 0))
}

func (c *smtpConn) close() { _ = c.raw.Close() }

func (c *smtpConn) flush() error { return c.bw.Flush() }

// cmd sends one command line (without CRLF) and reads its reply.
func (c *smtpConn) cmd(line string) (code int, msg string, err error) {
	c.bw.WriteString(line)
	c.bw.WriteString("\r\n")
	if err := c.flush(); err != nil {
		return 0, "", err
	}
	return readReply(c.br)
}

// quit says QUIT and does not wait long for the answer.
func (c *smtpConn) quit() {
	c.deadline(min(c.opts.CommandTimeout, 2*time.Second))
	_, _, _ = c.cmd("QUIT")
}

// noop checks an idle connection.
func (c *smtpConn) noop(ctx context.Context) error {
	stop := context.AfterFunc(ctx, c.abortFn)
	defer stop()
	c.deadline(c.opts.CommandTimeout)
	code, _, err := c.cmd("NOOP")
	if err == nil && code/100 != 2 {
		err = fmt.Errorf("NOOP: %d", code)
	}
	return err
}

// unsolicited reports whether the server has sent anything that no
// command asked for: bytes already buffered, or waiting in the socket. An
// idle connection the server closed counts too. It never blocks.
func (c *smtpConn) unsolicited() bool {
	return c.br.Buffered() > 0 || c.peek.pending()
}
