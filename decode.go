package postroom

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"sync"
)

// ErrInvalidJSON is wrapped by every error of DecodeCall: the body is not
// JSON, or not shaped like a Call.
var ErrInvalidJSON = errors.New("postroom: invalid call body")

var callType = reflect.TypeFor[Call]()

// DecodeCall decodes a message.send or message.send_template call body, as
// an HTTP handler receives it, more strictly than json.Unmarshal: every
// object key must be a field of the spec, spelled exactly (json.Unmarshal
// would take "Subject" for "subject"), at most once (json.Unmarshal keeps
// the last of repeated keys: two parsers that disagree on which value counts
// are how requests get smuggled past checks), and objects, arrays and
// strings must be where the spec has them. params and global_params take any
// JSON object, decoded as Params.UnmarshalJSON decodes it (as json.Unmarshal
// does): objects keep the order of their keys, and so does the top level
// of each params (see Params), numbers are json.Number
// values, so that an integer keeps its exact value (an order id
// 9007199254740993 prints as written, not rounded to a float64), and a
// number beyond float64's range is refused.
//
// A body of the wrong shape, or with a number out of range, gives a
// *ValidationError whose Field names the offending field ("message.htmll",
// "recipients[3].email", "recipients[0].params.total"); a body that is not
// JSON gives its syntax error. Both wrap ErrInvalidJSON.
func DecodeCall(data []byte) (*Call, error) {
	if err := checkShape(data, callType); err != nil {
		if errors.Is(err, ErrInvalidJSON) {
			return nil, err
		}
		return nil, decodeError(err)
	}
	var call Call
	// As json.Unmarshal, without its pass that checks the JSON, which
	// checkShape has done.
	if err := call.UnmarshalJSON(data); err != nil {
		if ve := (*ValidationError)(nil); errors.As(err, &ve) {
			return nil, locateParams(data, ve)
		}
		return nil, decodeError(err)
	}
	return &call, nil
}

// locateParams returns ve, an error of Params.UnmarshalJSON for a call
// body of the right shape, with the path of the params it is in.
func locateParams(data []byte, ve *ValidationError) error {
	var raw struct {
		GlobalParams json.RawMessage `json:"global_params"`
		Recipients   []struct {
			Params json.RawMessage `json:"params"`
		} `json:"recipients"`
	}
	if json.Unmarshal(data, &raw) != nil {
		return ve
	}
	where := func(field string, b json.RawMessage) error {
		var p Params
		var e *ValidationError
		if len(b) == 0 || !errors.As(p.UnmarshalJSON(b), &e) {
			return nil
		}
		e.Field = field + "." + e.Field
		return e
	}
	if err := where("global_params", raw.GlobalParams); err != nil {
		return err
	}
	for i, r := range raw.Recipients {
		if err := where("recipients["+strconv.Itoa(i)+"].params", r.Params); err != nil {
			return err
		}
	}
	return ve
}

// decodeError wraps an error of encoding/json in ErrInvalidJSON. A value
// that JSON allows but Go cannot hold is the caller's input: a
// *ValidationError naming the field.
func decodeError(err error) error {
	if ute := (*json.UnmarshalTypeError)(nil); errors.As(err, &ute) {
		field := ute.Field
		if field == "" {
			field = "(body)"
		}
		return &ValidationError{Field: field, Reason: ute.Value + " is out of range", Err: ErrInvalidJSON}
	}
	return fmt.Errorf("%w: %w", ErrInvalidJSON, err)
}

// checkShape reads one JSON value from data and checks it against the JSON
// fields of t, recursively. Maps and interface values (params,
// global_params) may hold anything; a top-level value that is not an object
// is refused. It returns a *ValidationError, a *json.SyntaxError, or
// io.ErrUnexpectedEOF.
func checkShape(data []byte, t reflect.Type) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	w := walker{dec: dec}
	tok, err := w.token()
	switch {
	case err != nil:
		return err
	case tok != json.Delim('{'):
		return &ValidationError{Field: "(body)", Reason: "must be a JSON object", Err: ErrInvalidJSON}
	}
	if err := w.object(structFields(t)); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		if err == nil {
			return &json.SyntaxError{Offset: dec.InputOffset()}
		}
		return err
	}
	return nil
}

// walker walks one JSON document, keeping the path of the value it is in
// as a stack of keys and indexes, formatted only when something is wrong.
type walker struct {
	dec  *json.Decoder
	path []any // string keys and int indexes
}

func (w *walker) token() (json.Token, error) {
	tok, err := w.dec.Token()
	if errors.Is(err, io.EOF) {
		return nil, io.ErrUnexpectedEOF
	}
	return tok, err
}

func (w *walker) fail(reason string) error {
	var b strings.Builder
	for _, p := range w.path {
		switch p := p.(type) {
		case string:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(p)
		case int:
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(p))
			b.WriteByte(']')
		}
	}
	if b.Len() == 0 {
		b.WriteString("(body)")
	}
	return &ValidationError{Field: b.String(), Reason: reason, Err: ErrInvalidJSON}
}

// value checks the next value against t.
func (w *walker) value(t reflect.Type) error {
	switch k := t.Kind(); k {
	case reflect.String, reflect.Map, reflect.Interface:
		// Scalars and free-form values are read whole: much faster than
		// token by token, and params may be large.
		var raw json.RawMessage
		if err := w.dec.Decode(&raw); err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
		switch c := raw[0]; {
		case c == 'n': // null leaves a Go value as it is, whatever its type
		case k == reflect.String && c != '"':
			return w.fail("must be a string")
		case k == reflect.Map && c != '{':
			return w.fail("must be an object")
		}
		return nil
	}
	tok, err := w.token()
	if err != nil || tok == nil {
		return err
	}
	switch t.Kind() {
	case reflect.Struct:
		if tok != json.Delim('{') {
			return w.fail("must be an object")
		}
		return w.object(structFields(t))
	case reflect.Slice:
		if tok != json.Delim('[') {
			return w.fail("must be an array")
		}
		for i := 0; w.dec.More(); i++ {
			w.path = append(w.path, i)
			if err := w.value(t.Elem()); err != nil {
				return err
			}
			w.path = w.path[:len(w.path)-1]
		}
		_, err := w.token() // ]
		return err
	}
	return fmt.Errorf("postroom: DecodeCall: unsupported Go type %s", t)
}

// object checks the members of an object whose '{' has been read.
func (w *walker) object(fields *fieldSet) error {
	var seen uint64 // a struct of postroom's has far fewer than 64 fields
	for w.dec.More() {
		tok, err := w.token()
		if err != nil {
			return err
		}
		key, _ := tok.(string) // the decoder allows only strings as keys
		w.path = append(w.path, key)
		i, ok := fields.index[key]
		switch {
		case !ok:
			return w.fail("unknown field")
		case seen&(1<<i) != 0:
			return w.fail("repeated field")
		}
		seen |= 1 << i
		if err := w.value(fields.types[i]); err != nil {
			return err
		}
		w.path = w.path[:len(w.path)-1]
	}
	_, err := w.token() // }
	return err
}

// fieldSet is the JSON fields of a struct type: name to index, index to type.
type fieldSet struct {
	index map[string]int
	types []reflect.Type
}

var fieldSets sync.Map // reflect.Type → *fieldSet

// structFields returns the JSON fields of struct type t, from their json
// tags (or Go names without one), as encoding/json sees them.
func structFields(t reflect.Type) *fieldSet {
	if fs, ok := fieldSets.Load(t); ok {
		return fs.(*fieldSet)
	}
	fs := &fieldSet{index: map[string]int{}}
	for f := range t.Fields() {
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch name {
		case "-":
			continue
		case "":
			name = f.Name
		}
		if len(fs.types) == 64 {
			panic("postroom: DecodeCall: struct " + t.String() + " has more than 64 JSON fields")
		}
		fs.index[name] = len(fs.types)
		fs.types = append(fs.types, f.Type)
	}
	actual, _ := fieldSets.LoadOrStore(t, fs)
	return actual.(*fieldSet)
}
