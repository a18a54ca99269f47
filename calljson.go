package postroom

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"

	"github.com/postroom/postroom/internal/calljson"
	"github.com/postroom/postroom/internal/program"
)

// The JSON decoding of Call and Recipient, which keeps the order of the
// top-level keys of params and global_params (the root context of a
// template, whose {{#each}} follows it as handlebars.js does) in
// unexported fields, and their encoding, which writes params in that
// order. The JSON is exactly encoding/json's: a fast path reads the usual
// shape (the fields spelled as the spec spells them, once each, strings
// without escapes) in one pass; anything else is read by encoding/json
// through a struct of the same fields.

// UnmarshalJSON decodes a call as encoding/json decodes a struct of its
// fields, params as Params.UnmarshalJSON, and notes the order of the keys
// of global_params. Like encoding/json by default, it ignores unknown
// fields; a json.Decoder's DisallowUnknownFields does not reach a method,
// so use DecodeCall, which refuses them, to decode strictly.
func (c *Call) UnmarshalJSON(b []byte) error {
	if reflect.ValueOf(c).Elem().IsZero() {
		if fast, ok := decodeCallFast(b); ok {
			*c = fast
			return nil
		}
	}
	return c.decodeSlow(b)
}

func (c *Call) decodeSlow(b []byte) error {
	type recipients = []Recipient
	// Named Call, as encoding/json's errors name the struct.
	type Call struct {
		Key          string     `json:"key"`
		AccountID    string     `json:"account_id"`
		Message      Message    `json:"message"`
		Recipients   recipients `json:"recipients"`
		GlobalParams paramsJSON `json:"global_params"`
	}
	aux := Call{c.Key, c.AccountID, c.Message, c.Recipients, paramsJSON{c.GlobalParams, c.globalOrder}}
	err := json.Unmarshal(b, &aux)
	c.Key, c.AccountID, c.Message, c.Recipients = aux.Key, aux.AccountID, aux.Message, aux.Recipients
	c.GlobalParams, c.globalOrder = aux.GlobalParams.p, aux.GlobalParams.order
	return err
}

// UnmarshalJSON decodes a recipient as encoding/json decodes a struct of
// its fields, params as Params.UnmarshalJSON, and notes the order of the
// keys of params.
func (r *Recipient) UnmarshalJSON(b []byte) error {
	if r.Email == "" && r.Name == "" && r.Params == nil && r.order == nil {
		if fast, next, ok := decodeRecipientAt(b, 0); ok && calljson.SkipSpace(b, next) == len(b) {
			*r = fast
			return nil
		}
	}
	return r.decodeSlow(b)
}

func (r *Recipient) decodeSlow(b []byte) error {
	// Named Recipient, as encoding/json's errors name the struct.
	type Recipient struct {
		Email  string     `json:"email"`
		Name   string     `json:"name"`
		Params paramsJSON `json:"params"`
	}
	aux := Recipient{r.Email, r.Name, paramsJSON{r.Params, r.order}}
	err := json.Unmarshal(b, &aux)
	r.Email, r.Name, r.Params, r.order = aux.Email, aux.Name, aux.Params.p, aux.Params.order
	return err
}

// paramsJSON is params and the order of their keys, decoded together.
type paramsJSON struct {
	p     Params
	order []string
}

func (o *paramsJSON) UnmarshalJSON(b []byte) error {
	m, keys, err := decodeParams(b)
	if err != nil {
		return err
	}
	if m != nil {
		o.p, o.order = m, keys
	}
	return nil
}

// decodeParams decodes params, as Params.UnmarshalJSON, with the order of
// their keys; null gives nil.
func decodeParams(b []byte) (Params, []string, error) {
	m, keys, err := program.DecodeMapKeys(b)
	if err != nil {
		var re *program.NumberRangeError
		if errors.As(err, &re) {
			return nil, nil, &ValidationError{Field: re.Path, Reason: numberReason(re), Err: ErrInvalidJSON}
		}
		return nil, nil, err
	}
	return m, keys, nil
}

// decodeCallFast decodes the usual call body; ok is false for anything
// else, malformed JSON included, which encoding/json then reads.
func decodeCallFast(b []byte) (c Call, ok bool) {
	var seen [5]bool
	i := calljson.SkipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return c, false
	}
	i = calljson.SkipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return c, calljson.SkipSpace(b, i+1) == len(b)
	}
	for {
		var key []byte
		if key, i, ok = calljson.Key(b, i); !ok {
			return c, false
		}
		f := slices.Index(callKeys[:], string(key))
		if f < 0 || seen[f] {
			return c, false
		}
		seen[f] = true
		if calljson.IsNull(b, i) {
			i += 4
			if f == 3 {
				c.Recipients = nil
			}
		} else {
			switch f {
			case 0, 1:
				s, next, ok := calljson.StringValue(b, i)
				if !ok {
					return c, false
				}
				if f == 0 {
					c.Key = s
				} else {
					c.AccountID = s
				}
				i = next
			case 2:
				end, ok := calljson.SkipValue(b, i)
				if !ok || b[i] != '{' || json.Unmarshal(b[i:end], &c.Message) != nil {
					return c, false
				}
				i = end
			case 3:
				if i, ok = decodeRecipientsAt(b, i, &c); !ok {
					return c, false
				}
			case 4:
				if b[i] != '{' {
					return c, false
				}
				m, keys, next, err := program.DecodeMapAt(b, i)
				if err != nil {
					return c, false
				}
				c.GlobalParams, c.globalOrder, i = m, keys, next
			}
		}
		var more bool
		if i, more, ok = calljson.After(b, i, '}'); !ok || !more {
			return c, ok && calljson.SkipSpace(b, i) == len(b)
		}
	}
}

var callKeys = [5]string{"key", "account_id", "message", "recipients", "global_params"}

// decodeRecipientsAt decodes the array of recipients at b[i] into c.
func decodeRecipientsAt(b []byte, i int, c *Call) (int, bool) {
	if b[i] != '[' {
		return 0, false
	}
	c.Recipients = []Recipient{}
	i = calljson.SkipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1, true
	}
	for {
		if i >= len(b) {
			return 0, false
		}
		r, next, ok := decodeRecipientAt(b, i)
		if !ok {
			// An unusual recipient: encoding/json reads it.
			end, ok := calljson.SkipValue(b, i)
			if !ok || b[i] != '{' {
				return 0, false
			}
			r = Recipient{}
			if r.decodeSlow(b[i:end]) != nil {
				return 0, false
			}
			next = end
		}
		c.Recipients = append(c.Recipients, r)
		var more bool
		if i, more, ok = calljson.After(b, next, ']'); !ok || !more {
			return i, ok
		}
	}
}

// decodeRecipientAt decodes the usual recipient object at b[i] (after
// spaces) and returns the offset after it; ok is false for anything else.
func decodeRecipientAt(b []byte, i int) (r Recipient, next int, ok bool) {
	var seen [3]bool
	i = calljson.SkipSpace(b, i)
	if i >= len(b) || b[i] != '{' {
		return r, 0, false
	}
	i = calljson.SkipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return r, i + 1, true
	}
	for {
		var key []byte
		if key, i, ok = calljson.Key(b, i); !ok {
			return r, 0, false
		}
		var f int
		switch string(key) {
		case "email":
			f = 0
		case "name":
			f = 1
		case "params":
			f = 2
		default:
			return r, 0, false
		}
		if seen[f] {
			return r, 0, false
		}
		seen[f] = true
		switch {
		case calljson.IsNull(b, i):
			i += 4
		case f == 2:
			if b[i] != '{' {
				return r, 0, false
			}
			m, keys, next, err := program.DecodeMapAt(b, i)
			if err != nil {
				return r, 0, false
			}
			r.Params, r.order, i = m, keys, next
		default:
			s, next, ok := calljson.StringValue(b, i)
			if !ok {
				return r, 0, false
			}
			if f == 0 {
				r.Email = s
			} else {
				r.Name = s
			}
			i = next
		}
		var more bool
		if i, more, ok = calljson.After(b, i, '}'); !ok || !more {
			return r, i, ok
		}
	}
}
