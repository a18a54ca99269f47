package program

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"time"
)

// maxPrintDepth bounds the nesting of an array printed as text, so that a
// cyclic slice is an error rather than a stack overflow.
const maxPrintDepth = 64

var errUnprintable = errors.New("program: value cannot be printed")

// Str returns the string form of v as handlebars.js prints a value (JavaScript's
// String(v)): strings as they are, numbers as JavaScript prints them (1e-7,
// 1e+21, 0 for -0) except that integers print exactly as given (an int64, a
// uint64, a json.Number written as an integer), booleans as true and false,
// nil as "", arrays as their elements joined with commas (a nil element as
// ""), maps and structs as [object Object], a time.Time as encoding/json
// writes it. A func, a chan or an array nested deeper than 64 levels is an
// error.
func Str(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case nil:
		return "", nil
	}
	b, err := appendStr(nil, v, false, 0, nil)
	return string(b), err
}

// appendFloat appends f as JavaScript's Number.prototype.toString does:
// the shortest digits that read back as f, in decimal notation for
// 1e-6 <= |f| < 1e21 and in exponent notation (1e+21, 1e-7) beyond; -0
// prints 0.
func appendFloat(dst []byte, f float64) []byte {
	switch {
	case f == 0:
		return append(dst, '0')
	case f != f:
		return append(dst, "NaN"...)
	case math.IsInf(f, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(f, -1):
		return append(dst, "-Infinity"...)
	case f >= -1e15 && f <= 1e15:
		if i := int64(f); float64(i) == f {
			return strconv.AppendInt(dst, i, 10)
		}
	}
	if a := math.Abs(f); a >= 1e-6 && a < 1e21 {
		return strconv.AppendFloat(dst, f, 'f', -1, 64)
	}
	var buf [32]byte
	e := strconv.AppendFloat(buf[:0], f, 'e', -1, 64) // 1.5e-07, 1e+21
	i := bytes.IndexByte(e, 'e')
	dst = append(dst, e[:i+2]...) // mantissa, 'e' and the sign
	exp := e[i+2:]
	for len(exp) > 1 && exp[0] == '0' {
		exp = exp[1:]
	}
	return append(dst, exp...)
}

// appendNumber appends a json.Number: an integer exactly as written (-0 as
// 0), any other number as appendFloat prints its value.
func appendNumber(dst []byte, n json.Number) []byte {
	if isIntLiteral(string(n)) {
		if n == "-0" {
			return append(dst, '0')
		}
		return append(dst, n...)
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return append(dst, n...)
	}
	return appendFloat(dst, f)
}

// isIntLiteral reports whether s is an optional minus sign followed by
// decimal digits only.
func isIntLiteral(s string) bool {
	if len(s) > 0 && s[0] == '-' {
		s = s[1:]
	}
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// escTable marks the bytes handlebars.js's escapeExpression replaces.
var escTable = [256]bool{'&': true, '\'': true, '<': true, '>': true, '"': true, '`': true, '=': true}

// appendEscaped appends s to dst, HTML-escaped as handlebars.js's
// escapeExpression does.
func appendEscaped(dst []byte, s string) []byte {
	last := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !escTable[c] {
			continue
		}
		dst = append(dst, s[last:i]...)
		switch c {
		case '&':
			dst = append(dst, "&amp;"...)
		case '\'':
			dst = append(dst, "&#x27;"...)
		case '<':
			dst = append(dst, "&lt;"...)
		case '>':
			dst = append(dst, "&gt;"...)
		case '"':
			dst = append(dst, "&quot;"...)
		case '`':
			dst = append(dst, "&#x60;"...)
		case '=':
			dst = append(dst, "&#x3D;"...)
		}
		last = i + 1
	}
	return append(dst, s[last:]...)
}

func appendString(dst []byte, s string, esc bool) []byte {
	if esc {
		return appendEscaped(dst, s)
	}
	return append(dst, s...)
}

// objectString is how JavaScript prints an object.
const objectString = "[object Object]"

// appendStr appends the string form of v (see Str), escaped when esc.
// steps, when not nil, is charged one step per array element printed.
func appendStr(dst []byte, v any, esc bool, depth int, steps *int) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return dst, nil
	case string:
		return appendString(dst, x, esc), nil
	case float64:
		return appendFloat(dst, x), nil
	case bool:
		return strconv.AppendBool(dst, x), nil
	case int:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case json.Number:
		return appendNumber(dst, x), nil
	case map[string]any, rootT, nullCtxT, *Object:
		return append(dst, objectString...), nil
	case []any:
		if depth >= maxPrintDepth {
			return dst, errUnprintable
		}
		var err error
		for i, e := range x {
			if steps != nil {
				*steps--
			}
			if i > 0 {
				dst = append(dst, ',')
			}
			if dst, err = appendStr(dst, e, esc, depth+1, steps); err != nil {
				return dst, err
			}
		}
		return dst, nil
	}
	return appendReflect(dst, reflect.ValueOf(v), esc, depth, steps)
}

var (
	timeType   = reflect.TypeFor[time.Time]()
	numberType = reflect.TypeFor[json.Number]()
)

// appendReflect prints values beyond encoding/json's as their JSON round
// trip would print in handlebars.js.
func appendReflect(dst []byte, rv reflect.Value, esc bool, depth int, steps *int) ([]byte, error) {
	if depth >= maxPrintDepth {
		return dst, errUnprintable
	}
	for (rv.Kind() == reflect.Pointer || rv.Kind() == reflect.Interface) && !rv.IsNil() {
		rv = rv.Elem()
	}
	if !rv.IsValid() {
		return dst, nil
	}
	if !rv.CanInterface() {
		return dst, errUnprintable
	}
	switch rv.Kind() {
	case reflect.Pointer, reflect.Interface:
		return dst, nil // nil
	case reflect.Chan, reflect.Func, reflect.UnsafePointer, reflect.Complex64, reflect.Complex128:
		return dst, fmt.Errorf("%w: %s", errUnprintable, rv.Type())
	case reflect.Array, reflect.Slice:
		if rv.Kind() == reflect.Slice && rv.IsNil() {
			return dst, nil // JSON null
		}
		var err error
		for i := 0; i < rv.Len(); i++ {
			if steps != nil {
				*steps--
			}
			if i > 0 {
				dst = append(dst, ',')
			}
			if dst, err = appendReflect(dst, rv.Index(i), esc, depth+1, steps); err != nil {
				return dst, err
			}
		}
		return dst, nil
	case reflect.Bool:
		return strconv.AppendBool(dst, rv.Bool()), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.AppendInt(dst, rv.Int(), 10), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return strconv.AppendUint(dst, rv.Uint(), 10), nil
	case reflect.Float32, reflect.Float64:
		return appendFloat(dst, rv.Float()), nil
	case reflect.String:
		if rv.Type() == numberType {
			return appendNumber(dst, json.Number(rv.String())), nil
		}
		return appendString(dst, rv.String(), esc), nil
	case reflect.Map:
		if rv.IsNil() {
			return dst, nil // JSON null
		}
	case reflect.Struct:
		if rv.Type() == timeType {
			t := rv.Interface().(time.Time)
			return appendString(dst, t.Format(time.RFC3339Nano), esc), nil
		}
	}
	return append(dst, objectString...), nil
}
