package transport_test

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
)

// sockets counts the client's own sockets through SMTPOptions.Dial, so
// that client-side rules (MaxConns, idle closing, bytes read) are checked
// where they hold: the server learns of a close only later.
type sockets struct {
	mu     sync.Mutex
	cond   *sync.Cond
	open   int
	most   int
	dialed int
	read   atomic.Int64 // bytes read from every socket
	wrote  atomic.Int64 // bytes written to every socket
}

func newSockets() *sockets {
	s := &sockets{}
	s.cond = sync.NewCond(&s.mu)
	return s
}

// dial is an SMTPOptions.Dial.
func (s *sockets) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.open++
	s.dialed++
	s.most = max(s.most, s.open)
	s.mu.Unlock()
	return &countedConn{TCPConn: c.(*net.TCPConn), s: s}, nil
}

// counts returns how many sockets were dialed and the most open at once.
func (s *sockets) counts() (dialed, most int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dialed, s.most
}

// waitOpen blocks until exactly n sockets are open.
func (s *sockets) waitOpen(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.open != n {
		s.cond.Wait()
	}
}

// countedConn embeds *net.TCPConn, so that it keeps SyscallConn.
type countedConn struct {
	*net.TCPConn
	s    *sockets
	once sync.Once
}

func (c *countedConn) Read(p []byte) (int, error) {
	n, err := c.TCPConn.Read(p)
	c.s.read.Add(int64(n))
	return n, err
}

func (c *countedConn) Write(p []byte) (int, error) {
	n, err := c.TCPConn.Write(p)
	c.s.wrote.Add(int64(n))
	return n, err
}

func (c *countedConn) Close() error {
	err := c.TCPConn.Close()
	c.once.Do(func() {
		c.s.mu.Lock()
		c.s.open--
		c.s.cond.Broadcast()
		c.s.mu.Unlock()
	})
	return err
}
