package inbound

import (
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// connLimits are the Options that bound each connection of a Serve call.
type connLimits struct {
	hostname       string
	maxConns       int
	perClient      int
	stressTimeout  time.Duration
	maxSessionTime time.Duration
	maxJunk        int
	tlsOffered     bool
	log            *slog.Logger
}

func (rc *Receiver) connLimits() connLimits {
	o := rc.opts
	return connLimits{
		hostname:       o.Hostname,
		maxConns:       o.MaxConnections,
		perClient:      o.MaxConnectionsPerClient,
		stressTimeout:  o.StressReadTimeout,
		maxSessionTime: o.MaxSessionTime,
		maxJunk:        o.MaxJunkCommands,
		tlsOffered:     o.TLS != nil,
		log:            o.Logger,
	}
}

// limitListener accepts at most maxConns connections at once (as
// golang.org/x/net/netutil.LimitListener), and at most perClient from one
// IP address (refused at once, as Postfix's anvil does); it keeps the
// open ones, so that Serve can close them all when its ctx ends, and
// says when they run short (stressed). Each connection is a clientConn.
type limitListener struct {
	net.Listener
	lim       connLimits
	stressAt  int // open connections from which the stress timeout applies
	sem       chan struct{}
	done      chan struct{}
	closeOnce sync.Once
	open      atomic.Int64 // len(conns), read without mu

	mu        sync.Mutex
	conns     map[*clientConn]struct{}
	perClient map[string]int // open connections by client IP address
}

func newLimitListener(l net.Listener, lim connLimits) *limitListener {
	return &limitListener{
		Listener:  l,
		lim:       lim,
		stressAt:  lim.maxConns - lim.maxConns/5,
		sem:       make(chan struct{}, lim.maxConns),
		done:      make(chan struct{}),
		conns:     make(map[*clientConn]struct{}),
		perClient: make(map[string]int),
	}
}

// evictIdle is how long a connection must have waited for its next
// command before a new client may take its slot when every slot is taken.
const evictIdle = time.Second

// Accept takes the next connection from a client under its own limit.
// When every slot is taken, the new client gets the slot of the
// connection that has waited longest for its next command (at least
// evictIdle; it is closed 421 4.4.2), so that idle connections from many
// addresses do not keep a bounce from being greeted; with none idle so
// long, it waits for a slot.
func (l *limitListener) Accept() (net.Conn, error) {
	for {
		acquired := false
		select {
		case l.sem <- struct{}{}:
			acquired = true
		case <-l.done:
			return nil, net.ErrClosed
		default:
		}
		c, err := l.Listener.Accept()
		if err != nil {
			if acquired {
				<-l.sem
			}
			return nil, err
		}
		client := clientAddr(c.RemoteAddr())
		l.mu.Lock()
		over := client != "" && l.perClient[client] >= l.lim.perClient
		l.mu.Unlock()
		if over {
			if acquired {
				<-l.sem
			}
			l.refuse(c)
			continue
		}
		if !acquired {
			if v := l.idlest(time.Now().Add(-evictIdle)); v != nil {
				v.end("421 4.4.2 %s Error: timeout exceeded")
			}
			select {
			case l.sem <- struct{}{}:
			case <-l.done:
				c.Close()
				return nil, net.ErrClosed
			}
		}
		l.mu.Lock()
		select {
		case <-l.done:
			l.mu.Unlock()
			c.Close()
			<-l.sem
			return nil, net.ErrClosed
		default:
		}
		if client != "" && l.perClient[client] >= l.lim.perClient {
			// Another connection of the client came in meanwhile.
			l.mu.Unlock()
			<-l.sem
			l.refuse(c)
			continue
		}
		if client != "" {
			l.perClient[client]++
		}
		cc := newClientConn(c, l, client)
		l.conns[cc] = struct{}{}
		l.open.Store(int64(len(l.conns)))
		var idle []*clientConn
		if len(l.conns) == l.stressAt {
			// Stress begins: the connections waiting with ReadTimeout
			// now wait StressReadTimeout at most.
			for o := range l.conns {
				idle = append(idle, o)
			}
		}
		l.mu.Unlock()
		for _, o := range idle {
			o.tighten()
		}
		return cc, nil
	}
}

// idlest is the open connection that has waited longest for its next
// command, since before, or nil when none has waited since then.
func (l *limitListener) idlest(before time.Time) *clientConn {
	l.mu.Lock()
	defer l.mu.Unlock()
	var v *clientConn
	oldest := before
	for c := range l.conns {
		if since := c.waitingSince(); !since.IsZero() && since.Before(oldest) {
			v, oldest = c, since
		}
	}
	return v
}

// refuse answers a connection over its client's limit, as Postfix's
// smtpd does, and closes it.
func (l *limitListener) refuse(c net.Conn) {
	c.SetWriteDeadline(time.Now().Add(time.Second))
	fmt.Fprintf(c, "421 4.7.0 %s Error: too many connections from your address\r\n", l.lim.hostname)
	c.Close()
	l.lim.log.Info("inbound: connection refused: too many from its client", "client", clientAddr(c.RemoteAddr()))
}

// stressed says whether the open connections run short.
func (l *limitListener) stressed() bool { return l.open.Load() >= int64(l.stressAt) }

// release frees c's slot; once per connection.
func (l *limitListener) release(c *clientConn) {
	l.mu.Lock()
	delete(l.conns, c)
	l.open.Store(int64(len(l.conns)))
	if c.client != "" {
		if l.perClient[c.client]--; l.perClient[c.client] <= 0 {
			delete(l.perClient, c.client)
		}
	}
	l.mu.Unlock()
	<-l.sem
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
	conns := make([]*clientConn, 0, len(l.conns))
	for c := range l.conns {
		conns = append(conns, c)
	}
	l.mu.Unlock()
	for _, c := range conns {
		c.Close()
	}
}

// clientAddr is the IP address of a client, "" when it has none (a Unix
// socket).
func clientAddr(a net.Addr) string {
	switch a := a.(type) {
	case *net.TCPAddr:
		return a.IP.String()
	case *net.UDPAddr:
		return a.IP.String()
	}
	return ""
}
