package inbound

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/emersion/go-smtp"
)

// endWriteTime bounds the write of the reply that ends a session.
const endWriteTime = time.Second

// lingerTime bounds, after the reply that ends a session, the reading of
// what the client still sends (see linger); lingerBytes bounds how much.
const (
	lingerTime  = 250 * time.Millisecond
	lingerBytes = 64 << 10
)

// errEnded is what a clientConn's Read and Write return once it ended
// its session; go-smtp's server then ends the connection quietly (it
// wraps net.ErrClosed).
var errEnded = fmt.Errorf("inbound: session ended: %w", net.ErrClosed)

// clientConn is one client's connection, as go-smtp's server reads and
// writes it. It ends the session itself, with a fixed reply that names no
// error, address or internal state, then closes, when:
//
//   - a read times out (ReadTimeout, the deadline go-smtp sets before
//     each command line, or StressReadTimeout while stressed): go-smtp
//     would run the half line read so far as a command and wait anew
//     (bufio.Reader.ReadLine returns a partial line without the error);
//     here the error stays, and no reply to that half line is sent;
//   - a read fails otherwise (go-smtp would answer a BDAT chunk cut by
//     it with the error's text, which names both addresses);
//   - the session has lasted MaxSessionTime;
//   - a command line is longer than maxCommandLine, or the client sent
//     more than MaxJunkCommands junk commands (cmdLines).
//
// Closing frees its slot of the limitListener at once.
type clientConn struct {
	net.Conn
	l         *limitListener
	client    string // IP address, "" for none
	timer     *time.Timer
	closeOnce sync.Once

	mu       sync.Mutex
	deadline time.Time // the read deadline go-smtp asked for
	ended    bool
	// ending is closed once end has written its reply and lingered; nil
	// until end begins. Close waits for it, so that go-smtp, whose read
	// end cuts short, does not close the connection before the reply.
	ending chan struct{}
	lines  cmdLines
	// waiting is when a read began that waits for the next command (no
	// part of a command or message read yet), zero at other times.
	waiting time.Time

	wmu sync.Mutex // one write at a time: go-smtp's replies, the last one
}

func newClientConn(c net.Conn, l *limitListener, client string) *clientConn {
	cc := &clientConn{
		Conn:   c,
		l:      l,
		client: client,
		lines:  cmdLines{maxJunk: l.lim.maxJunk, tlsOffered: l.lim.tlsOffered},
	}
	cc.timer = time.AfterFunc(l.lim.maxSessionTime, func() {
		cc.end("421 4.4.2 %s Error: session time limit exceeded")
	})
	return cc
}

// connOf is the clientConn under go-smtp's connection, or nil.
func connOf(sc *smtp.Conn) *clientConn {
	nc := sc.Conn()
	if t, ok := nc.(*tls.Conn); ok {
		nc = t.NetConn()
	}
	cc, _ := nc.(*clientConn)
	return cc
}

func (c *clientConn) Read(p []byte) (int, error) {
	c.mu.Lock()
	if c.ended {
		c.mu.Unlock()
		return 0, errEnded
	}
	c.setReadDeadlineLocked()
	if c.lines.betweenCommands() {
		c.waiting = time.Now()
	}
	c.mu.Unlock()

	n, err := c.Conn.Read(p)

	c.mu.Lock()
	c.waiting = time.Time{}
	ended, s := c.ended, keepOn
	if !ended && n > 0 {
		s = c.lines.read(p[:n])
	}
	c.mu.Unlock()
	var ne net.Error
	switch {
	case ended:
	case s == stopLongLine:
		c.end("500 5.5.2 %s Error: command line too long")
	case s == stopEmptyChunk:
		c.end("500 5.5.4 %s Error: empty BDAT chunk without LAST")
	case s == stopChunkingReset:
		c.end("421 4.5.0 %s Error: message transfer reset")
	case s == stopJunk:
		c.end("421 4.7.0 %s Error: too many junk commands")
	case err != nil && errors.As(err, &ne) && ne.Timeout():
		c.end("421 4.4.2 %s Error: timeout exceeded")
	case errors.Is(err, net.ErrClosed):
		return n, err // closed here: Serve ends, or the session was ended
	case err != nil && err != io.EOF:
		// go-smtp answers a BDAT chunk cut by an error with the error's
		// text; no reply but this one is sent.
		c.end("421 4.4.0 %s Error: connection error")
	default:
		return n, err
	}
	return 0, errEnded
}

func (c *clientConn) Write(p []byte) (int, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.mu.Lock()
	ended := c.ended
	c.mu.Unlock()
	if ended {
		return 0, errEnded
	}
	return c.Conn.Write(p)
}

func (c *clientConn) SetDeadline(t time.Time) error {
	return errors.Join(c.SetReadDeadline(t), c.SetWriteDeadline(t))
}

func (c *clientConn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.deadline = t
	if c.ended {
		return nil
	}
	return c.setReadDeadlineLocked()
}

func (c *clientConn) SetWriteDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ended {
		return nil // the last reply's bound stays
	}
	return c.Conn.SetWriteDeadline(t)
}

// setReadDeadlineLocked sets the deadline go-smtp asked for, or a nearer
// one while the listener is stressed.
func (c *clientConn) setReadDeadlineLocked() error {
	d := c.deadline
	if c.l.stressed() {
		if s := time.Now().Add(c.l.lim.stressTimeout); d.IsZero() || s.Before(d) {
			d = s
		}
	}
	return c.Conn.SetReadDeadline(d)
}

// waitingSince is when c began to wait for its next command, or zero
// when it is not waiting for one (a command or a message under way, a
// reply being written, the session ended).
func (c *clientConn) waitingSince() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ended {
		return time.Time{}
	}
	return c.waiting
}

// tighten brings the deadline of a read under way within
// StressReadTimeout, when stress begins.
func (c *clientConn) tighten() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.ended {
		c.setReadDeadlineLocked()
	}
}

// dataStarted says that the session's Data is reading a message.
func (c *clientConn) dataStarted() {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.lines.dataStarted()
	c.mu.Unlock()
}

// transferReset says that the session was reset while a Data call of
// BDAT was under way: see cmdLines.
func (c *clientConn) transferReset() {
	if c != nil {
		c.end("421 4.5.0 %s Error: message transfer reset")
	}
}

// messageTaken says that a message was taken.
func (c *clientConn) messageTaken() {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.lines.messageTaken()
	c.mu.Unlock()
}

// end ends the session with reply (a format with the hostname's %s),
// once; after STARTTLS it only closes (the reply would have to be
// encrypted).
func (c *clientConn) end(reply string) {
	c.mu.Lock()
	if c.ended {
		c.mu.Unlock()
		return
	}
	c.ended = true
	c.ending = make(chan struct{})
	encrypted := c.lines.off
	c.Conn.SetWriteDeadline(time.Now().Add(endWriteTime)) // a write under way gives up
	c.Conn.SetReadDeadline(time.Now())                    // so does a read
	c.mu.Unlock()
	c.l.lim.log.Info("inbound: session ended by the server", "reply", fmt.Sprintf(reply, c.l.lim.hostname), "client", c.RemoteAddr().String())
	if !encrypted {
		c.wmu.Lock()
		c.Conn.SetWriteDeadline(time.Now().Add(endWriteTime))
		fmt.Fprintf(c.Conn, reply+"\r\n", c.l.lim.hostname)
		c.wmu.Unlock()
		c.linger()
	}
	close(c.ending)
	c.Close()
}

// linger half-closes the connection after its last reply and reads what
// the client still sends, for lingerTime at most: a close with unread
// input makes the kernel reset the connection, and the client's TCP then
// drops the last reply before the client reads it (a client that
// pipelines its commands, or trickles them, would never see why the
// session ended).
func (c *clientConn) linger() {
	cw, ok := c.Conn.(interface{ CloseWrite() error })
	if !ok || cw.CloseWrite() != nil {
		return
	}
	c.Conn.SetReadDeadline(time.Now().Add(lingerTime))
	io.Copy(io.Discard, io.LimitReader(c.Conn, lingerBytes))
}

// Close closes the connection and frees its slot, once the reply of an
// end under way is written (end's own bounds, at most).
func (c *clientConn) Close() error {
	c.mu.Lock()
	ending := c.ending
	c.mu.Unlock()
	if ending != nil {
		<-ending
	}
	err := c.Conn.Close()
	c.closeOnce.Do(func() {
		c.timer.Stop()
		c.l.release(c)
	})
	return err
}
