package inbound

import (
	"strings"
	"testing"
)

// TestCmdLines: what ends a session, and what does not, as go-smtp would
// read the same bytes.
func TestCmdLines(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		data bool // the session's Data starts after the input's first line
		want stop
		junk int
	}{
		{"a transaction", "EHLO x\r\nMAIL FROM:<>\r\nRCPT TO:<a@b>\r\nDATA\r\n", false, keepOn, 1},
		{"junk counted", "NOOP\r\nRSET\r\nVRFY a\r\nHELP\r\nXYZW\r\n", false, keepOn, 5},
		{"one junk too many", strings.Repeat("NOOP\r\n", 6), false, stopJunk, 6},
		{"a chunk is not commands", "BDAT 12 LAST\r\nNOOP\r\nNOOP\r\nNOOP\r\n", false, keepOn, 1},
		{"refused BDAT has no chunk", "BDAT x\r\nNOOP\r\n", false, keepOn, 1},
		{"content is not commands", "DATA\r\n" + strings.Repeat("NOOP\r\n", 10) + ".\r\nNOOP\r\n", true, keepOn, 1},
		{"long content line", "DATA\r\n" + strings.Repeat("x", 5000) + "\r\n.\r\n", true, keepOn, 0},
		{"long command line", "NOOP " + strings.Repeat("x", maxCommandLine) + "\r\n", false, stopLongLine, 0},
		{"long line without end", strings.Repeat("x", maxCommandLine+1), false, stopLongLine, 0},
		{"empty chunk", "BDAT 0\r\n", false, stopEmptyChunk, 0},
		{"empty last chunk", "BDAT 0 LAST\r\n", false, keepOn, 0},
		{"reset between chunks", "BDAT 2\r\nxyRSET\r\n", false, stopChunkingReset, 0},
		{"EHLO between chunks", "BDAT 2\r\nxyEHLO x\r\n", false, stopChunkingReset, 0},
		{"RSET after the last chunk", "BDAT 2\r\nxyBDAT 1 LAST\r\nzRSET\r\n", false, keepOn, 1},
		{"STARTTLS ends what is seen", "STARTTLS\r\n" + strings.Repeat("\x16\x03\x01", 1000), false, keepOn, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := cmdLines{maxJunk: 5, tlsOffered: true}
			in := tc.in
			if tc.data {
				first, rest, _ := strings.Cut(in, "\n")
				if s := c.read([]byte(first + "\n")); s != keepOn {
					t.Fatalf("first line: %v", s)
				}
				c.dataStarted()
				in = rest
			}
			if got := c.read([]byte(in)); got != tc.want {
				t.Errorf("stop %v, want %v", got, tc.want)
			}
			if c.junk != tc.junk {
				t.Errorf("junk %d, want %d", c.junk, tc.junk)
			}
		})
	}
}

// FuzzCmdLines: any bytes, read in two pieces cut anywhere, end the same
// way and leave the same state as read at once; a line kept is never
// longer than maxCommandLine.
func FuzzCmdLines(f *testing.F) {
	for _, s := range []string{
		"LHLO x\r\nMAIL FROM:<>\r\nRCPT TO:<a@b>\r\nBDAT 10\r\n0123456789RSET\r\nMAIL FROM:<>\r\nQUIT\r\n",
		"MAIL FROM:<", "NOOP xxx", "BDAT 0\r\n", "BDAT 3 LAST\r\nabcNOOP\r\n", "DATA\r\n.\r\n",
		"STARTTLS\r\nNOOP\r\n", strings.Repeat("NOOP\r\n", 7),
	} {
		f.Add([]byte(s), uint16(3))
	}
	f.Fuzz(func(t *testing.T, in []byte, cut uint16) {
		whole := cmdLines{maxJunk: 5, tlsOffered: true}
		ws := whole.read(in)
		k := 0
		if len(in) > 0 {
			k = int(cut) % (len(in) + 1)
		}
		parts := cmdLines{maxJunk: 5, tlsOffered: true}
		ps := parts.read(in[:k])
		if ps == keepOn {
			ps = parts.read(in[k:])
		}
		if ws != ps {
			t.Fatalf("stop %v at once, %v in two pieces cut at %d", ws, ps, k)
		}
		if ws != keepOn {
			return
		}
		if len(whole.line) > maxCommandLine || whole.n > maxCommandLine {
			t.Fatalf("a line of %d octets kept", whole.n)
		}
		if string(whole.line) != string(parts.line) || whole.n != parts.n || whole.skip != parts.skip ||
			whole.junk != parts.junk || whole.off != parts.off || whole.chunking != parts.chunking ||
			whole.lastData != parts.lastData {
			t.Fatalf("state at once %+v, in pieces %+v", whole, parts)
		}
	})
}
