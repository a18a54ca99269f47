package program

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

// Decoding parameters from JSON as JSON.parse reads them, objects as
// *Object in their order.

// NumberRangeError is DecodeValue's error for a number beyond float64's
// range: a number is accepted when its value, rounded to a float64, is
// finite (|x| <= math.MaxFloat64), where JSON.parse gives a finite number
// too (beyond it JavaScript has Infinity). Integers within the range keep
// every digit; an integer of 309 digits or more is beyond it unless it is
// below 1.7976931348623157e308. Path is where the number is, from the
// decoded value ("a.b[1]", "" for the value itself).
type NumberRangeError struct {
	Path   string
	Number string
	index  bool // Path starts with an array index
}

// Error names the number and its path.
func (e *NumberRangeError) Error() string {
	n := e.Number
	if len(n) > 40 {
		n = n[:20] + "..." + n[len(n)-10:] + " (" + strconv.Itoa(len(n)) + " characters)"
	}
	if e.Path == "" {
		return "program: number " + n + " is beyond float64's range"
	}
	return "program: " + e.Path + ": number " + n + " is beyond float64's range"
}

// DecodeValue decodes one JSON value: an object as an *Object, an array
// as []any, a number as a json.Number (as written), a string, true,
// false or null as string, bool and nil. A number beyond float64's range
// is a *NumberRangeError; malformed JSON a *json.SyntaxError.
func DecodeValue(b []byte) (any, error) {
	d := decoder{b: b}
	v, err := d.value(0)
	if err != nil {
		return nil, err
	}
	return v, d.end()
}

// maxDecodeDepth bounds the nesting of arrays and objects, as
// encoding/json does.
const maxDecodeDepth = 10000

// decoder reads JSON from b at i. encoding/json calls UnmarshalJSON with a
// value it has checked; the decoder checks the grammar again for other
// callers, at little cost.
type decoder struct {
	b []byte
	i int
	// members and values are stacks of the members of the objects and
	// the elements of the arrays being read, nested ones above their
	// parents', so that each object or array is allocated once, at its
	// size.
	members []member
	values  []any
}

// syntax is the error of malformed JSON at the current offset; what
// tells what is wrong, for the reader of the code.
func (d *decoder) syntax(what string) error {
	return &json.SyntaxError{Offset: int64(d.i)}
}

func (d *decoder) space() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

func (d *decoder) end() error {
	d.space()
	if d.i != len(d.b) {
		return d.syntax("data after the value")
	}
	return nil
}

func (d *decoder) literal(s string) bool {
	if bytes.HasPrefix(d.b[d.i:], []byte(s)) {
		d.i += len(s)
		return true
	}
	return false
}

func (d *decoder) value(depth int) (any, error) {
	d.space()
	if d.i >= len(d.b) {
		return nil, d.syntax("unexpected end")
	}
	switch c := d.b[d.i]; {
	case c == '{':
		return d.object(depth)
	case c == '[':
		return d.array(depth)
	case c == '"':
		return d.str()
	case c == '-' || c >= '0' && c <= '9':
		return d.number()
	case d.literal("true"):
		return true, nil
	case d.literal("false"):
		return false, nil
	case d.literal("null"):
		return nil, nil
	}
	return nil, d.syntax("unexpected character")
}

func (d *decoder) object(depth int) (*Object, error) {
	base := len(d.members)
	index, err := d.objectMembers(depth)
	var ms []member
	if len(d.members) > base {
		ms = slices.Clone(d.members[base:])
	}
	clear(d.members[base:])
	d.members = d.members[:base]
	if err != nil {
		return nil, err
	}
	return newObject(ms, index), nil
}

// objectMembers reads the members of an object onto d.members and returns
// their index when there are more than indexFrom.
func (d *decoder) objectMembers(depth int) (map[string]int, error) {
	if depth >= maxDecodeDepth {
		return nil, d.syntax("nested too deep")
	}
	base := len(d.members)
	var index map[string]int
	d.i++ // {
	d.space()
	if d.i < len(d.b) && d.b[d.i] == '}' {
		d.i++
		return nil, nil
	}
	for {
		d.space()
		if d.i >= len(d.b) || d.b[d.i] != '"' {
			return nil, d.syntax("expected a key")
		}
		k, err := d.str()
		if err != nil {
			return nil, err
		}
		d.space()
		if d.i >= len(d.b) || d.b[d.i] != ':' {
			return nil, d.syntax("expected a colon")
		}
		d.i++
		v, err := d.value(depth + 1)
		if err != nil {
			return nil, prefixPath(err, keyPath(k), false)
		}
		if index == nil && len(d.members)-base == indexFrom {
			index = make(map[string]int, 2*indexFrom)
			for i, m := range d.members[base:] {
				index[m.key] = i
			}
		}
		if index != nil {
			if i, ok := index[k]; ok {
				d.members[base+i].val = v
			} else {
				index[k] = len(d.members) - base
				d.members = append(d.members, member{k, v})
			}
		} else if i := slices.IndexFunc(d.members[base:], func(m member) bool { return m.key == k }); i >= 0 {
			d.members[base+i].val = v
		} else {
			d.members = append(d.members, member{k, v})
		}
		d.space()
		if d.i >= len(d.b) {
			return nil, d.syntax("unexpected end")
		}
		switch d.b[d.i] {
		case ',':
			d.i++
		case '}':
			d.i++
			return index, nil
		default:
			return nil, d.syntax("expected a comma or }")
		}
	}
}

func (d *decoder) array(depth int) ([]any, error) {
	if depth >= maxDecodeDepth {
		return nil, d.syntax("nested too deep")
	}
	base := len(d.values)
	defer func() {
		clear(d.values[base:])
		d.values = d.values[:base]
	}()
	d.i++ // [
	d.space()
	if d.i < len(d.b) && d.b[d.i] == ']' {
		d.i++
		return []any{}, nil
	}
	for {
		v, err := d.value(depth + 1)
		if err != nil {
			return nil, prefixPath(err, "["+strconv.Itoa(len(d.values)-base)+"]", true)
		}
		d.values = append(d.values, v)
		d.space()
		if d.i >= len(d.b) {
			return nil, d.syntax("unexpected end")
		}
		switch d.b[d.i] {
		case ',':
			d.i++
		case ']':
			d.i++
			return slices.Clone(d.values[base:]), nil
		default:
			return nil, d.syntax("expected a comma or ]")
		}
	}
}

// DecodeMap decodes a JSON object as a map (nil for null), its values as
// DecodeValue decodes them.
func DecodeMap(b []byte) (map[string]any, error) {
	m, _, err := DecodeMapKeys(b)
	return m, err
}

// DecodeMapKeys is DecodeMap that also returns the object's keys in the
// order they were first written (nil when it has none): Params.UnmarshalJSON
// and the decoding of a call's params, whose top level is a Go map, keep
// it for Data.ParamsOrder and Data.GlobalsOrder.
func DecodeMapKeys(b []byte) (map[string]any, []string, error) {
	d := decoder{b: b}
	d.space()
	if d.literal("null") {
		return nil, nil, d.end()
	}
	m, keys, err := d.topObject()
	if err != nil {
		return nil, nil, err
	}
	if err := d.end(); err != nil {
		return nil, nil, err
	}
	return m, keys, nil
}

// DecodeMapAt decodes the JSON object that starts at b[i], after spaces,
// as DecodeMapKeys does, and returns the offset just after it, so that a
// caller that reads a larger document can decode params in place.
func DecodeMapAt(b []byte, i int) (m map[string]any, keys []string, next int, err error) {
	d := decoder{b: b, i: i}
	d.space()
	m, keys, err = d.topObject()
	return m, keys, d.i, err
}

// topObject reads an object as a map and its keys in order.
func (d *decoder) topObject() (map[string]any, []string, error) {
	if d.i >= len(d.b) || d.b[d.i] != '{' {
		return nil, nil, d.syntax("expected an object")
	}
	if _, err := d.objectMembers(0); err != nil {
		return nil, nil, err
	}
	m := make(map[string]any, len(d.members))
	var keys []string
	if len(d.members) > 0 {
		keys = make([]string, len(d.members))
	}
	for i, x := range d.members {
		m[x.key] = x.val
		keys[i] = x.key
	}
	return m, keys, nil
}

// str reads a string. One with no escape and valid UTF-8 is its bytes;
// any other is decoded by encoding/json (which replaces invalid UTF-8
// with U+FFFD).
func (d *decoder) str() (string, error) {
	start := d.i
	d.i++ // "
	if n := bytes.IndexByte(d.b[d.i:], '"'); n >= 0 {
		raw := d.b[d.i : d.i+n]
		if bytes.IndexByte(raw, '\\') < 0 {
			ascii := true
			for _, c := range raw {
				if c < 0x20 {
					return "", d.syntax("control character in a string")
				}
				ascii = ascii && c < utf8.RuneSelf
			}
			d.i += n + 1
			if ascii || utf8.Valid(raw) {
				return string(raw), nil
			}
			return d.unquote(start)
		}
	}
	for d.i < len(d.b) {
		switch c := d.b[d.i]; {
		case c == '"':
			d.i++
			return d.unquote(start)
		case c == '\\':
			d.i += 2
			continue
		case c < 0x20:
			return "", d.syntax("control character in a string")
		}
		d.i++
	}
	d.i = len(d.b)
	return "", d.syntax("unterminated string")
}

// unquote decodes the string from start to d.i with encoding/json.
func (d *decoder) unquote(start int) (string, error) {
	var s string
	if err := json.Unmarshal(d.b[start:d.i], &s); err != nil {
		return "", d.syntax("bad escape")
	}
	return s, nil
}

// number reads a number, checks its grammar and its range.
func (d *decoder) number() (json.Number, error) {
	start := d.i
	if d.b[d.i] == '-' {
		d.i++
	}
	digits := func() int {
		n := 0
		for d.i < len(d.b) && d.b[d.i] >= '0' && d.b[d.i] <= '9' {
			d.i++
			n++
		}
		return n
	}
	intStart := d.i
	n := digits()
	if n == 0 || n > 1 && d.b[intStart] == '0' {
		return "", d.syntax("bad number")
	}
	simple := true // no exponent
	if d.i < len(d.b) && d.b[d.i] == '.' {
		d.i++
		if digits() == 0 {
			return "", d.syntax("bad number")
		}
	}
	if d.i < len(d.b) && (d.b[d.i] == 'e' || d.b[d.i] == 'E') {
		simple = false
		d.i++
		if d.i < len(d.b) && (d.b[d.i] == '+' || d.b[d.i] == '-') {
			d.i++
		}
		if digits() == 0 {
			return "", d.syntax("bad number")
		}
	}
	num := json.Number(d.b[start:d.i])
	if !simple || n > 308 {
		// 308 digits before the point are below 1e308, within range.
		if f, err := strconv.ParseFloat(string(num), 64); err != nil && math.IsInf(f, 0) {
			return "", &NumberRangeError{Number: string(num)}
		}
	}
	return num, nil
}

// keyPath is how a key reads in a path: "a", or "[a b]" when it is not
// a plain name.
func keyPath(k string) string {
	for i := 0; i < len(k); i++ {
		if !isWordByte(k[i]) {
			return "[" + k + "]"
		}
	}
	if k == "" {
		return "[]"
	}
	return k
}

// prefixPath puts a segment in front of the path of a *NumberRangeError:
// a key (joined with a dot) or an array index ("[2]").
func prefixPath(err error, seg string, index bool) error {
	var re *NumberRangeError
	if !errors.As(err, &re) {
		return err
	}
	switch {
	case re.Path == "":
		re.Path = seg
	case re.Path[0] == '[' && re.index:
		re.Path = seg + re.Path
	default:
		re.Path = seg + "." + re.Path
	}
	re.index = index
	return re
}
