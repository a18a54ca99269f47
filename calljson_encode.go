package postroom

import "github.com/postroom/postroom/internal/calljson"

// The JSON encoding of Call and Recipient: encoding/json's of a struct of
// their fields, but with the top-level keys of global_params and params
// in the order they were decoded in (calljson.go), so that a decoded call
// encodes back to itself (a queued call renders as a direct one).

// MarshalJSON encodes the call as encoding/json encodes a struct of its
// fields, global_params with their keys in the order they were decoded in,
// then any added since, sorted (see Params).
func (c Call) MarshalJSON() ([]byte, error) {
	w := calljson.NewWriter()
	w.WriteString(`{"key":`)
	w.Value(c.Key)
	w.WriteString(`,"account_id":`)
	w.Value(c.AccountID)
	w.WriteString(`,"message":`)
	w.Value(c.Message)
	w.WriteString(`,"recipients":`)
	if c.Recipients == nil {
		w.WriteString("null")
	} else {
		// Each recipient written here, not through its MarshalJSON, whose
		// output encoding/json would check again.
		w.WriteByte('[')
		for i := range c.Recipients {
			if i > 0 {
				w.WriteByte(',')
			}
			writeRecipient(w, &c.Recipients[i])
		}
		w.WriteByte(']')
	}
	w.WriteString(`,"global_params":`)
	w.Params(c.GlobalParams, c.globalOrder)
	w.WriteByte('}')
	return w.Bytes()
}

// MarshalJSON encodes the recipient as encoding/json encodes a struct of
// its fields, params with their keys in the order they were decoded in,
// then any added since, sorted.
func (r Recipient) MarshalJSON() ([]byte, error) {
	w := calljson.NewWriter()
	writeRecipient(w, &r)
	return w.Bytes()
}

// writeRecipient writes r as Recipient.MarshalJSON does.
func writeRecipient(w *calljson.Writer, r *Recipient) {
	w.WriteString(`{"email":`)
	w.Value(r.Email)
	w.WriteString(`,"name":`)
	w.Value(r.Name)
	w.WriteString(`,"params":`)
	w.Params(r.Params, r.order)
	w.WriteByte('}')
}
