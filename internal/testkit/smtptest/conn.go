package smtptest

import (
	"bufio"
	"bytes"
	"io"
	"math"
	"net"
	"slices"
	"sync"
	"time"
)

// Reading modes of a conn.
const (
	modeCommand = iota // reading command lines
	modeData           // reading message text, up to the final dot
	modeChunk          // reading a BDAT chunk: chunkLeft bytes, raw
	modeTLS            // TLS started: bytes pass through untouched
)

// conn sits between the TCP connection and go-smtp (below TLS). In
// plaintext it reads the client's command lines one at a time so that it
// can apply the faults go-smtp has no hook for (Data, Reset, StartTLS): it hands a
// faulted command to go-smtp as NOOP and sends the scripted reply instead
// of NOOP's. It passes a BDAT chunk's bytes through in bulk, and takes
// CHUNKING out of the EHLO reply unless Options.Chunking. Under TLS it only
// counts and closes.
type conn struct {
	net.Conn
	srv  *Server
	num  int
	br   *bufio.Reader
	done chan struct{} // closed by Close

	closeOnce sync.Once

	// Read side, used by the goroutine go-smtp serves the connection on.
	pending   []byte
	midLine   bool
	chunkLeft int64 // modeChunk: bytes of the chunk not yet read
	skip      int64 // bytes of a refused BDAT chunk to throw away

	// mu guards the state shared by the read and write sides.
	mu         sync.Mutex
	mode       int
	expect354  bool
	expectTLS  bool
	replace    []byte // sent instead of the next reply
	inject     string // sent after the 220 to STARTTLS (Fault.Inject)
	closeAfter bool   // close after the next reply
	delay      time.Duration
	rcpts      []string // the transaction's accepted recipients, kept by the session
	chunked    bool     // the last DATA or BDAT command was BDAT
}

func newConn(c net.Conn, srv *Server, num int) *conn {
	return &conn{Conn: c, srv: srv, num: num, br: bufio.NewReaderSize(c, 64<<10), done: make(chan struct{})}
}

// Close closes the connection once and tells the server it is gone.
func (c *conn) Close() error {
	err := net.ErrClosed
	c.closeOnce.Do(func() {
		close(c.done)
		err = c.Conn.Close()
		c.srv.connClosed(c)
	})
	return err
}

// reset closes the connection with a TCP RST, as a crashing server or a
// middlebox does, so that the client fails at its next read or write.
func (c *conn) reset() {
	if tc, ok := c.Conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = c.Close()
}

// sleep waits d or until the connection is closed.
func (c *conn) sleep(d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-c.done:
	}
}

func (c *conn) Read(p []byte) (int, error) {
	if len(c.pending) == 0 && c.skip > 0 {
		n, err := io.CopyN(io.Discard, c.br, c.skip)
		c.skip -= n
		if err != nil {
			return 0, err
		}
	}
	c.mu.Lock()
	mode := c.mode
	c.mu.Unlock()
	switch {
	case mode == modeTLS:
		if c.br.Buffered() > 0 {
			return c.br.Read(p)
		}
		return c.Conn.Read(p)
	case mode == modeChunk && len(c.pending) == 0:
		if int64(len(p)) > c.chunkLeft {
			p = p[:c.chunkLeft]
		}
		n, err := c.br.Read(p)
		c.chunkLeft -= int64(n)
		if c.chunkLeft == 0 {
			c.mu.Lock()
			c.mode = modeCommand
			c.mu.Unlock()
		}
		return n, err
	}
	if len(c.pending) == 0 {
		line, err := c.br.ReadSlice('\n')
		switch {
		case err == bufio.ErrBufferFull:
			c.pending = line
			c.midLine = true
		case err != nil && len(line) == 0:
			return 0, err
		default:
			whole := !c.midLine
			c.midLine = false
			c.pending = line
			if whole {
				if err := c.command(line); err != nil {
					return 0, err
				}
			}
		}
	}
	n := copy(p, c.pending)
	c.pending = c.pending[n:]
	return n, nil
}

// command looks at one whole line the client sent and applies the faults
// of the Data, Reset and StartTLS stages.
func (c *conn) command(line []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mode == modeData {
		if string(line) == ".\r\n" {
			c.mode = modeCommand
		}
		return nil
	}
	var stage Stage
	chunk := int64(-1) // BDAT's chunk size
	cmd := bytes.TrimSpace(line)
	switch {
	case bytes.EqualFold(cmd, []byte("DATA")):
		stage = Data
		c.chunked = false
	case bytes.EqualFold(cmd, []byte("RSET")):
		stage = Reset
	case bytes.EqualFold(cmd, []byte("STARTTLS")):
		stage = StartTLS
	default:
		if chunk = bdatSize(cmd); chunk < 0 {
			return nil
		}
		stage = Data
		c.chunked = true
	}
	addr := ""
	if stage == Data && len(c.rcpts) > 0 {
		addr = c.rcpts[0]
	}
	f := c.srv.fault(stage, addr, c.num)
	c.delay = f.Delay
	switch {
	case stage == StartTLS && !f.Drop && f.Raw == "" && f.Code == 0:
		c.expectTLS = true
		c.inject = f.Inject
	case f.Drop:
		c.mu.Unlock()
		c.sleep(f.Delay)
		_ = c.Close()
		c.mu.Lock()
		return io.EOF
	case f.Raw != "" || f.Code != 0:
		c.pending = []byte("NOOP\r\n")
		c.replace = f.line()
		c.closeAfter = f.Raw != "" || f.Close
		c.skip = max(chunk, 0)
	case chunk > 0:
		c.mode = modeChunk
		c.chunkLeft = chunk
	case stage == Data && chunk < 0:
		c.expect354 = true
	}
	return nil
}

// bdatSize returns the chunk size of cmd, a command line without its
// CRLF, when it is a well-formed "BDAT <size> [LAST]" (in any case);
// otherwise -1, and go-smtp answers it (501) without reading a chunk.
func bdatSize(cmd []byte) int64 {
	if len(cmd) < 6 || !bytes.EqualFold(cmd[:5], []byte("BDAT ")) {
		return -1
	}
	size, last, _ := bytes.Cut(bytes.TrimSpace(cmd[5:]), []byte(" "))
	if last = bytes.TrimSpace(last); len(last) > 0 && !bytes.EqualFold(last, []byte("LAST")) {
		return -1
	}
	var n int64
	for _, d := range size {
		if d < '0' || d > '9' || n > math.MaxUint32/10 {
			return -1
		}
		n = n*10 + int64(d-'0')
	}
	if len(size) == 0 || n > math.MaxUint32 {
		return -1
	}
	return n
}

func (c *conn) Write(p []byte) (int, error) {
	c.mu.Lock()
	if c.mode == modeTLS {
		c.mu.Unlock()
		return c.Conn.Write(p)
	}
	if !c.srv.opts.Chunking && string(p) == "250-CHUNKING\r\n" {
		// go-smtp writes each line of its EHLO reply on its own, and
		// CHUNKING is never the last (SIZE follows it).
		c.mu.Unlock()
		return len(p), nil
	}
	out := p
	if c.replace != nil {
		out, c.replace = c.replace, nil
	} else if c.expect354 {
		c.expect354 = false
		if bytes.HasPrefix(p, []byte("354")) {
			c.mode = modeData
		}
	}
	toTLS := false
	if c.expectTLS {
		c.expectTLS = false
		toTLS = bytes.HasPrefix(p, []byte("220"))
		if toTLS && c.inject != "" {
			out = append(slices.Clip(p), c.inject...)
		}
		c.inject = ""
	}
	d, closeAfter := c.delay, c.closeAfter
	c.delay, c.closeAfter = 0, false
	c.mu.Unlock()

	c.sleep(d)
	if _, err := c.Conn.Write(out); err != nil {
		return 0, err
	}
	if closeAfter {
		_ = c.Close()
	}
	if toTLS {
		c.mu.Lock()
		c.mode = modeTLS
		c.mu.Unlock()
	}
	return len(p), nil
}

// isChunked reports whether the transaction's message came with BDAT.
func (c *conn) isChunked() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.chunked
}

// setRcpts records the transaction's accepted recipients for the Data
// stage's Command.Addr.
func (c *conn) setRcpts(rcpts []string) {
	c.mu.Lock()
	c.rcpts = rcpts
	c.mu.Unlock()
}

// listener wraps every accepted connection in a conn and answers the
// Greeting faults itself (in plaintext only: under implicit TLS the greeting
// is go-smtp's).
type listener struct {
	net.Listener
	srv *Server
}

func (l *listener) Accept() (net.Conn, error) {
	for {
		nc, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		c := l.srv.newConn(nc)
		if l.srv.opts.TLS == TLSImplicit {
			c.mode = modeTLS
			return c, nil
		}
		f := l.srv.fault(Greeting, "", c.num)
		if f.Code == 0 && f.Raw == "" && !f.Drop {
			c.delay = f.Delay
			return c, nil
		}
		l.srv.wg.Add(1)
		go func() {
			defer l.srv.wg.Done()
			greetFault(c, f)
		}()
	}
}

// greetFault answers a connection whose greeting is scripted: a Drop or a
// Raw line ends it; a 4xx or a Close reply is followed by a close; any other
// code is followed by 503 to every command until QUIT (RFC 5321 §3.1).
func greetFault(c *conn, f Fault) {
	defer c.Close()
	c.sleep(f.Delay)
	if f.Drop {
		return
	}
	if _, err := c.Conn.Write(f.line()); err != nil || f.Raw != "" || f.Close || f.Code/100 == 4 {
		return
	}
	for {
		_ = c.Conn.SetReadDeadline(time.Now().Add(time.Minute))
		line, err := c.br.ReadString('\n')
		if err != nil {
			return
		}
		if bytes.EqualFold(bytes.TrimSpace([]byte(line)), []byte("QUIT")) {
			_, _ = c.Conn.Write([]byte("221 2.0.0 Bye\r\n"))
			return
		}
		if _, err := c.Conn.Write([]byte("503 5.5.1 No service, only QUIT\r\n")); err != nil {
			return
		}
	}
}
