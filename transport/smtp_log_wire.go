package transport

import (
	"io"
	"sync/atomic"
)

// wire is what a connection's bytes report to, above TLS: the transport's
// count of bytes written, always, and the connection's protocol trace,
// when its debug level was on at dial time.
type wire struct {
	written *atomic.Int64
	trace   *tracer // nil: no trace
}

// writer wraps w, the socket or the TLS connection on it.
func (w wire) writer(to io.Writer) io.Writer {
	return &wireWriter{w: to, wire: w}
}

// reader wraps r, the socket or the TLS connection on it; as it is when
// there is no trace.
func (w wire) reader(r io.Reader) io.Reader {
	if w.trace == nil {
		return r
	}
	return &traceReader{r: r, t: w.trace}
}

type wireWriter struct {
	w io.Writer
	wire
}

func (w *wireWriter) Write(p []byte) (int, error) {
	n, err := w.w.Write(p)
	w.written.Add(int64(n))
	w.trace.wrote(p[:n])
	return n, err
}

type traceReader struct {
	r io.Reader
	t *tracer
}

func (r *traceReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	r.t.read(p[:n])
	return n, err
}
