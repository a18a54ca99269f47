package postroomotel

// Buffers of span attributes, reused.

import "go.opentelemetry.io/otel/attribute"

// attrBuf is a buffer of a span's attributes. A span copies the
// attributes it is given, but a slice given to a method of an interface
// (trace.Span) is on the heap: Telemetry's pool keeps the buffers
// instead of a new one per span. It holds the most attributes a span of
// the package gets at its end (12, a call's).
type attrBuf struct {
	t  *Telemetry
	kv [12]attribute.KeyValue
}

// attrBuf returns a buffer from t's pool.
func (t *Telemetry) attrBuf() *attrBuf {
	if b, ok := t.bufs.Get().(*attrBuf); ok {
		return b
	}
	return &attrBuf{t: t}
}

// putAttrBuf clears b (no string of a call is kept) and puts it back.
func (t *Telemetry) putAttrBuf(b *attrBuf) {
	b.kv = [len(b.kv)]attribute.KeyValue{}
	t.bufs.Put(b)
}
