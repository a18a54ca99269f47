package calljson

// The writer of Call.MarshalJSON and Recipient.MarshalJSON: values as
// json.Marshal writes them, and params with their keys in a given order.

import (
	"bytes"
	"encoding/json"
	"slices"
)

// Writer writes JSON values as json.Marshal writes them (HTML characters
// escaped) into one buffer, and keeps the first error. The zero Writer is
// not ready: use NewWriter.
type Writer struct {
	buf bytes.Buffer
	enc *json.Encoder
	err error
}

// NewWriter returns an empty Writer.
func NewWriter() *Writer {
	w := new(Writer)
	w.enc = json.NewEncoder(&w.buf)
	return w
}

// WriteString writes s as it is: JSON the caller spells out.
func (w *Writer) WriteString(s string) { w.buf.WriteString(s) }

// WriteByte writes c as it is. Its error is always nil.
func (w *Writer) WriteByte(c byte) error { return w.buf.WriteByte(c) }

// Value writes v as json.Marshal does.
func (w *Writer) Value(v any) {
	if w.err != nil {
		return
	}
	if w.err = w.enc.Encode(v); w.err == nil {
		w.buf.Truncate(w.buf.Len() - 1) // Encode ends the value with a newline
	}
}

// Params writes p with the keys of order it has first, in that order,
// then the others sorted, as encoding/json sorts a map's; without an
// order, as encoding/json writes a map.
func (w *Writer) Params(p map[string]any, order []string) {
	if order == nil || p == nil {
		w.Value(p)
		return
	}
	keys := make([]string, 0, len(p))
	seen := make(map[string]bool, len(order))
	for _, k := range order {
		if _, ok := p[k]; ok && !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	rest := len(keys)
	if rest < len(p) {
		for k := range p {
			if !seen[k] {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys[rest:])
	}
	w.buf.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			w.buf.WriteByte(',')
		}
		w.Value(k)
		w.buf.WriteByte(':')
		w.Value(p[k])
	}
	w.buf.WriteByte('}')
}

// Bytes returns what was written, and the first error.
func (w *Writer) Bytes() ([]byte, error) { return w.buf.Bytes(), w.err }
