package inbound

import (
	"bytes"
	"strconv"
	"strings"
)

// maxCommandLine is the longest command line taken, in octets with its
// end of line: Postfix's line_length_limit (2048). Message lines are not
// bounded by it (see cmdLines).
const maxCommandLine = 2048

// cmdLines follows the bytes a client sends as go-smtp's server reads
// them, to bound what go-smtp cannot: the length of a command line (its
// Server.MaxLineLength bounds message lines too) and the commands that
// carry no mail (Options.MaxJunkCommands). It tells command lines from
// message content the way go-smtp does: after a BDAT command with a
// well-formed size, that many octets are the chunk; once the session's
// Data starts after a DATA command, the content runs to the line "."
// (go-smtp's dataReader states, mirrored in dot). After STARTTLS the
// bytes are encrypted and it stops: only time bounds that session.
//
// QUIRK: it ends a session at an empty BDAT chunk that is not the last
// ("BDAT 0"), before go-smtp v0.25.1 reads the command. As the first
// chunk, go-smtp starts the goroutine that runs Data without waiting for
// it (no byte goes through the chunk pipe), and when the connection
// closes first (QUIT, a timeout) that goroutine finds no session and
// panics (a nil pointer). No client sends an empty chunk but to end a
// message, with LAST. After STARTTLS it cannot be seen, and go-smtp's
// panic (recovered by go-smtp, and logged) stays possible.
//
// QUIRK: it ends a session when a BDAT transfer is reset (RSET, HELO,
// EHLO, LHLO between a chunk and the last one), before go-smtp v0.25.1
// reads the command. The goroutine that runs Data for the transfer sends
// its result to the connection's current result channel, read when it
// sends: when the next transaction's BDAT has made a new one by then,
// that transaction is answered with the old one's result (LHLO, MAIL,
// RCPT, "BDAT 10" with its chunk, RSET, MAIL, RCPT, "BDAT 10 LAST" with
// its chunk, in one write, answers the second message 451, although it
// was taken). Clients abort a transfer by closing, if ever. After
// STARTTLS the session's Reset ends it instead, a little later.
//
// It sees the bytes when they are read, which can be before go-smtp runs
// the commands before them: a client that sends a message before the
// reply to DATA has its message read as commands. No client that waits
// for the reply, as RFC 2920 asks, is affected.
type cmdLines struct {
	maxJunk    int
	tlsOffered bool // STARTTLS ends what can be read

	off      bool   // after STARTTLS
	line     []byte // the command line so far, up to maxCommandLine
	n        int    // its length
	skip     uint64 // BDAT chunk octets still to come
	content  bool   // in DATA content
	dot      int    // go-smtp's dataReader state in content
	lastData bool   // the last command line was DATA
	chunking bool   // a BDAT transfer is under way (a chunk without LAST)
	junk     int
}

// betweenCommands says that no part of a command line or a message has
// been read since the last command: the client owes the next command. It
// cannot be told after STARTTLS, and is false then.
func (c *cmdLines) betweenCommands() bool {
	return !c.off && c.n == 0 && c.skip == 0 && !c.content && !c.lastData && !c.chunking
}

// stop is why cmdLines ends a connection.
type stop int

const (
	keepOn stop = iota
	stopLongLine
	stopJunk
	stopEmptyChunk
	stopChunkingReset
)

// go-smtp's dataReader states.
const (
	dotBeginLine = iota
	dotDot
	dotDotCR
	dotCR
	dotData
)

// read follows p, the next bytes read from the client.
func (c *cmdLines) read(p []byte) stop {
	for len(p) > 0 && !c.off {
		switch {
		case c.skip > 0:
			k := uint64(len(p))
			if k > c.skip {
				k = c.skip
			}
			c.skip -= k
			p = p[k:]
		case c.content:
			p = c.readContent(p)
		default:
			i := bytes.IndexByte(p, '\n')
			if i < 0 {
				if c.n += len(p); c.n > maxCommandLine {
					return stopLongLine
				}
				c.line = append(c.line, p...)
				return keepOn
			}
			if c.n += i + 1; c.n > maxCommandLine {
				return stopLongLine
			}
			c.line = append(c.line, p[:i]...)
			p = p[i+1:]
			if s := c.command(string(c.line)); s != keepOn {
				return s
			}
			c.line, c.n = c.line[:0], 0
		}
	}
	return keepOn
}

// readContent follows DATA content to its end, as go-smtp's dataReader
// does, and returns what follows it.
func (c *cmdLines) readContent(p []byte) []byte {
	for i, b := range p {
		switch c.dot {
		case dotBeginLine:
			switch b {
			case '.':
				c.dot = dotDot
			case '\r':
				c.dot = dotCR
			default:
				c.dot = dotData
			}
		case dotDot:
			if b == '\r' {
				c.dot = dotDotCR
			} else {
				c.dot = dotData
			}
		case dotDotCR:
			if b == '\n' {
				c.content = false
				return p[i+1:]
			}
			c.dot = dotData
		case dotCR:
			if b == '\n' {
				c.dot = dotBeginLine
			} else {
				c.dot = dotData
			}
		case dotData:
			if b == '\r' {
				c.dot = dotCR
			}
		}
	}
	return nil
}

// command follows one command line, without its "\n", as go-smtp's
// parseCmd and handleBdat read it.
func (c *cmdLines) command(line string) stop {
	line = strings.TrimRight(line, "\r\n")
	c.lastData = false
	upper := strings.ToUpper(line)
	if strings.HasPrefix(upper, "STARTTLS") {
		c.off = c.tlsOffered
		return keepOn
	}
	verb := ""
	if len(line) == 4 || len(line) > 5 && line[4] == ' ' {
		verb = upper[:4]
	}
	if c.chunking {
		switch verb {
		case "RSET", "HELO", "EHLO", "LHLO":
			return stopChunkingReset
		}
	}
	switch verb {
	case "MAIL", "RCPT", "AUTH", "QUIT":
		return keepOn
	case "DATA":
		c.lastData = len(line) == 4
		return keepOn
	case "BDAT":
		if len(line) > 5 {
			var last bool
			c.skip, last = bdatSize(line[5:])
			if c.skip == 0 && !last {
				return stopEmptyChunk
			}
			c.chunking = !last
		}
		return keepOn
	}
	c.junk++
	if c.junk > c.maxJunk {
		return stopJunk
	}
	return keepOn
}

// bdatSize is the size of the chunk that follows a BDAT command with
// arguments arg, as go-smtp's handleBdat reads it, and whether it is the
// last; 0 and true when go-smtp refuses the command and reads no chunk.
func bdatSize(arg string) (n uint64, last bool) {
	args := strings.Fields(arg)
	if len(args) == 0 || len(args) > 2 || len(args) == 2 && !strings.EqualFold(args[1], "LAST") {
		return 0, true
	}
	n, err := strconv.ParseUint(args[0], 10, 32)
	if err != nil {
		return 0, true
	}
	return n, len(args) == 2
}

// dataStarted is called when the session's Data starts reading: after a
// DATA command, the content follows.
func (c *cmdLines) dataStarted() {
	if c.lastData && !c.off {
		c.content, c.dot, c.lastData = true, dotBeginLine, false
	}
}

// messageTaken is called when a message was taken: the junk count
// starts again, as Postfix's does after a delivery.
func (c *cmdLines) messageTaken() { c.junk = 0 }
