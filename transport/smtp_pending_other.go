//go:build !unix

package transport

import "net"

// pending cannot look into the socket here: only bytes already buffered
// are seen (see smtpConn.unsolicited).
func pending(net.Conn) bool { return false }
