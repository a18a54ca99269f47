package postroom

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"unicode/utf8"

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
		if fast, next, ok := decodeRecipientAt(b, 0); ok && skipSpace(b, next) == len(b) {
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
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return c, false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return c, skipSpace(b, i+1) == len(b)
	}
	for {
		key, next, ok := rawString(b, i)
		if !ok {
			return c, false
		}
		i = skipSpace(b, next)
		if i >= len(b) || b[i] != ':' {
			return c, false
		}
		if i = skipSpace(b, i+1); i >= len(b) {
			return c, false
		}
		f := slices.Index(callKeys[:], string(key))
		if f < 0 || seen[f] {
			return c, false
		}
		seen[f] = true
		if isNull(b, i) {
			i += 4
			if f == 3 {
				c.Recipients = nil
			}
		} else {
			switch f {
			case 0, 1:
				s, next, ok := stringValue(b, i)
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
				end, ok := skipValue(b, i)
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
		i = skipSpace(b, i)
		if i >= len(b) {
			return c, false
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case '}':
			return c, skipSpace(b, i+1) == len(b)
		default:
			return c, false
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
	i = skipSpace(b, i+1)
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
			end, ok := skipValue(b, i)
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
		i = skipSpace(b, next)
		if i >= len(b) {
			return 0, false
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case ']':
			return i + 1, true
		default:
			return 0, false
		}
	}
}

// decodeRecipientAt decodes the usual recipient object at b[i] (after
// spaces) and returns the offset after it; ok is false for anything else.
func decodeRecipientAt(b []byte, i int) (r Recipient, next int, ok bool) {
	var seen [3]bool
	i = skipSpace(b, i)
	if i >= len(b) || b[i] != '{' {
		return r, 0, false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return r, i + 1, true
	}
	for {
		key, next, ok := rawString(b, i)
		if !ok {
			return r, 0, false
		}
		i = skipSpace(b, next)
		if i >= len(b) || b[i] != ':' {
			return r, 0, false
		}
		if i = skipSpace(b, i+1); i >= len(b) {
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
		case isNull(b, i):
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
			s, next, ok := stringValue(b, i)
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
		i = skipSpace(b, i)
		if i >= len(b) {
			return r, 0, false
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case '}':
			return r, i + 1, true
		default:
			return r, 0, false
		}
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

func isNull(b []byte, i int) bool { return bytes.HasPrefix(b[i:], []byte("null")) }

// rawString returns the bytes of the string at b[i] when it has no escape
// and is valid UTF-8 without control characters, and the offset after it.
func rawString(b []byte, i int) ([]byte, int, bool) {
	if i >= len(b) || b[i] != '"' {
		return nil, 0, false
	}
	n := bytes.IndexByte(b[i+1:], '"')
	if n < 0 {
		return nil, 0, false
	}
	s := b[i+1 : i+1+n]
	ascii := true
	for _, c := range s {
		if c < 0x20 || c == '\\' {
			return nil, 0, false
		}
		ascii = ascii && c < utf8.RuneSelf
	}
	if !ascii && !utf8.Valid(s) {
		return nil, 0, false
	}
	return s, i + n + 2, true
}

// stringValue reads the string at b[i], one with escapes by encoding/json.
func stringValue(b []byte, i int) (string, int, bool) {
	if s, next, ok := rawString(b, i); ok {
		return string(s), next, true
	}
	if i >= len(b) || b[i] != '"' {
		return "", 0, false
	}
	end, ok := skipValue(b, i)
	var s string
	if !ok || json.Unmarshal(b[i:end], &s) != nil {
		return "", 0, false
	}
	return s, end, true
}

// skipValue returns the offset after the JSON value at b[i], read only
// as far as telling where it ends: the caller checks it.
func skipValue(b []byte, i int) (int, bool) {
	depth := 0
	for i < len(b) {
		switch c := b[i]; c {
		case '"':
			i++
			for i < len(b) && b[i] != '"' {
				if b[i] == '\\' {
					i++
				}
				i++
			}
			if i >= len(b) {
				return 0, false
			}
			i++
		case '{', '[':
			depth++
			i++
		case '}', ']':
			if depth == 0 {
				return i, true // the end of a scalar
			}
			depth--
			i++
		case ',', ' ', '\t', '\n', '\r', ':':
			if depth == 0 {
				return i, true
			}
			i++
		default:
			i++
		}
		if depth == 0 && i > 0 && (b[i-1] == '"' || b[i-1] == '}' || b[i-1] == ']') {
			return i, true
		}
	}
	if depth == 0 {
		return i, true
	}
	return 0, false
}
