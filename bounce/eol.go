package bounce

// Line ends: a message's lines may end in CRLF (the wire form), LF (a
// Unix mailbox), CR alone (classic Mac OS mail files) or a mix of them,
// and a line may end in several CRs before its LF (a CRLF message whose
// lines were given CRLF ends again). Parse reads every one of them as the
// same line end, so that they never change a Report.

import (
	"bytes"
	"io"
)

// eolReader reads r with every line end made one LF: a run of CRs
// followed by an LF is one line end, and a CR followed by anything else
// is a line end of its own.
type eolReader struct {
	r   io.Reader
	buf [4 << 10]byte
	in  []byte // read from r, not yet given out
	crs int    // CRs read and not yet given out
	nls int    // LFs owed: CRs that turned out to be line ends
	err error  // r's error, given out when in is empty
}

func (e *eolReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if e.nls > 0 {
			k := min(e.nls, len(p)-n)
			for i := 0; i < k; i++ {
				p[n+i] = '\n'
			}
			n, e.nls = n+k, e.nls-k
			continue
		}
		if len(e.in) == 0 {
			if e.err != nil {
				if e.crs > 0 {
					// CRs at the end of input end lines of their own.
					e.nls, e.crs = e.crs, 0
					continue
				}
				return n, e.err
			}
			if n > 0 {
				return n, nil // what is read is enough: do not block
			}
			m, err := e.r.Read(e.buf[:])
			e.in, e.err = e.buf[:m], err
			continue
		}
		c := e.in[0]
		switch {
		case c == '\r':
			e.crs++
			e.in = e.in[1:]
		case e.crs > 0 && c == '\n':
			e.crs = 0 // CR...CR LF: one line end, given as the LF
		case e.crs > 0:
			e.nls, e.crs = e.crs, 0 // CRs alone: each a line end
		default:
			// A run without CR goes out in one copy.
			k := bytes.IndexByte(e.in, '\r')
			if k < 0 {
				k = len(e.in)
			}
			k = copy(p[n:], e.in[:k])
			n += k
			e.in = e.in[k:]
		}
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
