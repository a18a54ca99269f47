package postroom

import (
	"bytes"
	"encoding/json"
	"slices"
)

// The JSON encoding of Call and Recipient: encoding/json's of a struct of
// their fields, but with the top-level keys of global_params and params
// in the order they were decoded in (calljson.go), so that a decoded call
// encodes back to itself (a queued call renders as a direct one).

// MarshalJSON encodes the call as encoding/json encodes a struct of its
// fields, global_params with their keys in the order they were decoded in,
// then any added since, sorted (see Params).
func (c Call) MarshalJSON() ([]byte, error) {
	w := newJSONWriter()
	w.buf.WriteString(`{"key":`)
	w.value(c.Key)
	w.buf.WriteString(`,"account_id":`)
	w.value(c.AccountID)
	w.buf.WriteString(`,"message":`)
	w.value(c.Message)
	w.buf.WriteString(`,"recipients":`)
	if c.Recipients == nil {
		w.buf.WriteString("null")
	} else {
		// Each recipient written here, not through its MarshalJSON, whose
		// output encoding/json would check again.
		w.buf.WriteByte('[')
		for i := range c.Recipients {
			if i > 0 {
				w.buf.WriteByte(',')
			}
			w.recipient(&c.Recipients[i])
		}
		w.buf.WriteByte(']')
	}
	w.buf.WriteString(`,"global_params":`)
	w.params(c.GlobalParams, c.globalOrder)
	w.buf.WriteByte('}')
	return w.buf.Bytes(), w.err
}

// MarshalJSON encodes the recipient as encoding/json encodes a struct of
// its fields, params with their keys in the order they were decoded in,
// then any added since, sorted.
func (r Recipient) MarshalJSON() ([]byte, error) {
	w := newJSONWriter()
	w.recipient(&r)
	return w.buf.Bytes(), w.err
}

// recipient writes r as Recipient.MarshalJSON does.
func (w *jsonWriter) recipient(r *Recipient) {
	w.buf.WriteString(`{"email":`)
	w.value(r.Email)
	w.buf.WriteString(`,"name":`)
	w.value(r.Name)
	w.buf.WriteString(`,"params":`)
	w.params(r.Params, r.order)
	w.buf.WriteByte('}')
}

// jsonWriter writes JSON values as json.Marshal writes them (HTML
// characters escaped) into buf; err is the first error.
type jsonWriter struct {
	buf bytes.Buffer
	enc *json.Encoder
	err error
}

func newJSONWriter() *jsonWriter {
	w := new(jsonWriter)
	w.enc = json.NewEncoder(&w.buf)
	return w
}

func (w *jsonWriter) value(v any) {
	if w.err != nil {
		return
	}
	if w.err = w.enc.Encode(v); w.err == nil {
		w.buf.Truncate(w.buf.Len() - 1) // Encode ends the value with a newline
	}
}

// params writes p with the keys of order it has first, in that order,
// then the others sorted, as encoding/json sorts a map's; without an
// order, as encoding/json writes a map.
func (w *jsonWriter) params(p Params, order []string) {
	if order == nil || p == nil {
		w.value(map[string]any(p))
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
		w.value(k)
		w.buf.WriteByte(':')
		w.value(p[k])
	}
	w.buf.WriteByte('}')
}
