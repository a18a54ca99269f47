package calljson

// The shape check of DecodeCall: a call body's keys and kinds of values
// against the JSON fields of the Go types it decodes into, before it is
// decoded, so that an unknown, misspelt or repeated key is refused with
// its path.

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

// ShapeError is a JSON value that is not where the Go type has it: Field
// is its path ("message.htmll", "recipients[3].email", "(body)"), Reason
// what is wrong ("unknown field", "repeated field", "must be a string").
type ShapeError struct {
	Field, Reason string
}

func (e *ShapeError) Error() string { return e.Field + ": " + e.Reason }

// CheckShape reads one JSON value from data and checks it against the JSON
// fields of t, recursively. Maps and interface values (params,
// global_params) may hold anything; a top-level value that is not an object
// is refused. It returns a *ShapeError, a *json.SyntaxError, or
// io.ErrUnexpectedEOF.
func CheckShape(data []byte, t reflect.Type) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	w := walker{dec: dec}
	tok, err := w.token()
	switch {
	case err != nil:
		return err
	case tok != json.Delim('{'):
		return &ShapeError{Field: "(body)", Reason: "must be a JSON object"}
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
	return &ShapeError{Field: b.String(), Reason: reason}
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
