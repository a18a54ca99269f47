package bounce

// Line ends: a message's lines may end in CRLF (the wire form), LF (a
// Unix mailbox), CR alone (classic Mac OS mail files) or a mix of them,
// and a line may end in CR CR LF (a CRLF message whose lines were given
// CRLF ends again). Parse reads every one of them as the same line end,
// so that they never change a Report.

import (
	"bytes"
	"io"
)

// eolReader reads r with every line end made one LF: LF, CR LF and
// CR CR LF are one line end each, and any other CR is a line end of its
// own. It works in the caller's buffer: a line end is never longer than
// what it replaces, and the (at most two) CRs that end one read are
// resolved by reading the next byte alone.
type eolReader struct {
	r    io.Reader
	crs  int     // CRs read and not yet given out (0, 1 or 2)
	nls  int     // LFs owed: CRs that turned out to be line ends
	one  [1]byte // the byte after CRs that ended a read
	held bool    // one[0] is to be given out after the owed LFs
	err  error   // r's error, given out when nothing is owed
	idle int     // reads of r in a row that gave nothing and no error
}

// got notes a read of r that gave m bytes and err: after 100 reads in a
// row that give nothing, r is broken (io.ErrNoProgress, as bufio says).
func (e *eolReader) got(m int, err error) {
	e.err = err
	if m > 0 || err != nil {
		e.idle = 0
	} else if e.idle++; e.idle >= 100 {
		e.err = io.ErrNoProgress
	}
}

func (e *eolReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		switch {
		case e.nls > 0:
			k := min(e.nls, len(p)-n)
			for i := 0; i < k; i++ {
				p[n+i] = '\n'
			}
			n, e.nls = n+k, e.nls-k
			continue
		case e.held:
			p[n], e.held = e.one[0], false
			n++
			continue
		case e.crs > 0 && e.err != nil:
			e.nls, e.crs = e.crs, 0 // CRs at the end of input end lines of their own
			continue
		case e.crs > 0:
			m, err := e.r.Read(e.one[:])
			e.got(m, err)
			if m == 0 {
				continue
			}
			switch e.one[0] {
			case '\r':
				if e.crs == 2 {
					e.nls = 1 // the first of three CRs ends a line alone
				} else {
					e.crs++
				}
			case '\n':
				e.crs, e.nls = 0, 1 // CR...CR LF: one line end
			default:
				e.nls, e.crs, e.held = e.crs, 0, true
			}
			continue
		case e.err != nil:
			return n, e.err
		case n > 0:
			return n, nil // what is read is enough: do not block
		}
		m, err := e.r.Read(p[n:])
		e.got(m, err)
		// In place: every CR read here moves the reading ahead of the
		// writing by one, so the LFs it becomes fit behind.
		w := n
		for i := n; i < n+m; i++ {
			c := p[i]
			if c == '\r' {
				if e.crs == 2 {
					p[w] = '\n' // the first of three CRs ends a line alone
					w++
				} else {
					e.crs++
				}
				continue
			}
			if e.crs > 0 {
				if c == '\n' {
					e.crs = 0
					p[w] = '\n'
					w++
					continue
				}
				for ; e.crs > 0; e.crs-- {
					p[w] = '\n'
					w++
				}
			}
			p[w] = c
			w++
		}
		n = w
	}
	return n, nil
}

// normalizeEOL returns b with its line ends made LF as eolReader makes
// them: for a part's decoded text, whose encoding hid its line ends from
// the walk.
func normalizeEOL(b []byte) []byte {
	if bytes.IndexByte(b, '\r') < 0 {
		return b
	}
	out, _ := io.ReadAll(&eolReader{r: bytes.NewReader(b)})
	return out
}
