package inbound

import (
	"net"
	"sync"
)

// limitListener accepts at most max connections at once (as
// golang.org/x/net/netutil.LimitListener) and keeps the open ones, so that
// Serve can close them all when its ctx ends.
type limitListener struct {
	net.Listener
	sem       chan struct{}
	done      chan struct{}
	closeOnce sync.Once

	mu    sync.Mutex
	conns map[*limitConn]struct{}
}

func newLimitListener(l net.Listener, max int) *limitListener {
	return &limitListener{
		Listener: l,
		sem:      make(chan struct{}, max),
		done:     make(chan struct{}),
		conns:    make(map[*limitConn]struct{}),
	}
}

// Accept waits for a free slot, then for a connection.
func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.sem <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.sem
		return nil, err
	}
	lc := &limitConn{Conn: c, l: l}
	l.mu.Lock()
	select {
	case <-l.done:
		l.mu.Unlock()
		lc.Close()
		return nil, net.ErrClosed
	default:
	}
	l.conns[lc] = struct{}{}
	l.mu.Unlock()
	return lc, nil
}

// Close stops accepting; it closes the listener it wraps.
func (l *limitListener) Close() error {
	var err error
	l.closeOnce.Do(func() {
		l.mu.Lock()
		close(l.done)
		l.mu.Unlock()
		err = l.Listener.Close()
	})
	return err
}

// closeConns closes every open connection.
func (l *limitListener) closeConns() {
	l.mu.Lock()
	conns := make([]*limitConn, 0, len(l.conns))
	for c := range l.conns {
		conns = append(conns, c)
	}
	l.mu.Unlock()
	for _, c := range conns {
		c.Close()
	}
}

// limitConn frees its slot once, when closed.
type limitConn struct {
	net.Conn
	l    *limitListener
	once sync.Once
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.l.mu.Lock()
		delete(c.l.conns, c)
		c.l.mu.Unlock()
		<-c.l.sem
	})
	return err
}
