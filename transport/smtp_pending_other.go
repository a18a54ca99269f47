//go:build !unix

package transport

import "net"

// peeker cannot look into the socket here: only bytes already buffered
// are seen (see smtpConn.unsolicited).
type peeker struct{}

func newPeeker(net.Conn) *peeker { return nil }

func (*peeker) pending() bool { return false }
