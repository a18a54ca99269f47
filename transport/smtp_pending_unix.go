//go:build unix

package transport

import (
	"net"
	"syscall"
)

// pending reports whether conn's socket holds bytes not yet read, or the
// peer has closed it, without blocking or consuming anything. It says
// false when it cannot tell (conn is not a socket).
func pending(conn net.Conn) bool {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	var b [1]byte
	found := false
	_ = rc.Read(func(fd uintptr) bool {
		n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK) // Go's sockets are non-blocking
		found = err == nil && n >= 0                                   // n == 0: the peer closed
		return true
	})
	return found
}
