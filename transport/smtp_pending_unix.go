//go:build unix

package transport

import (
	"net"
	"syscall"
)

// peeker looks into a socket for bytes not yet read. It is bound once per
// connection, so that a look allocates nothing.
type peeker struct {
	rc    syscall.RawConn
	fn    func(fd uintptr) bool
	found bool
	buf   [1]byte
}

// newPeeker returns a peeker for conn, or nil when conn is not a socket.
func newPeeker(conn net.Conn) *peeker {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	p := &peeker{rc: rc}
	p.fn = p.peek
	return p
}

func (p *peeker) peek(fd uintptr) bool {
	// Go's sockets are non-blocking: no data is EAGAIN.
	n, _, err := syscall.Recvfrom(int(fd), p.buf[:], syscall.MSG_PEEK)
	p.found = err == nil && n >= 0 // n == 0: the peer closed
	return true
}

// pending reports whether the socket holds bytes not yet read, or the
// peer has closed it, without blocking or consuming anything. It says
// false when it cannot tell.
func (p *peeker) pending() bool {
	if p == nil {
		return false
	}
	p.found = false
	if p.rc.Read(p.fn) != nil {
		return false
	}
	return p.found
}
