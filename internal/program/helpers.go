package program

import (
	"encoding/json"
	"errors"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// helperID is a helper's index in helperTable.
type helperID uint8

const (
	_ helperID = iota // zero: no helper
	// raymond's built-in helpers
	hIf
	hUnless
	hEach
	hWith
	hEqual
	hLookup
	hLog
	// postroom's helpers
	hUpper
	hLower
	hTitle
	hDefault
	hEq
	hNe
	hGt
	hLt
	hAnd
	hOr
	hNot
	hLength
	hURL
	hStriptags
	hDate
)

// helperSpec is one helper: its name, where and with how many arguments it
// may be called, and its function.
type helperSpec struct {
	name     string
	min, max int // max < 0: no maximum
	// blockOnly: raymond's implementation re-renders the enclosing block
	// when called outside block position (endless recursion), so it is
	// refused there. noBlock: raymond would write its result unescaped as
	// the block's output; refused to keep blocks meaning blocks.
	blockOnly, noBlock bool
	// js: handlebars.js has a helper of this name, which it calls even
	// with no arguments. The names of postroom's own helpers, used alone
	// ({{title}}), are parameters.
	js bool
	// fn computes the value of the helper from its arguments; nil for the
	// block helpers and log, which the evaluator runs itself.
	fn func(args []any) (any, error)
}

func (s helperSpec) arity() string {
	switch {
	case s.max < 0:
		return strconv.Itoa(s.min) + " or more arguments"
	case s.min == s.max && s.min == 1:
		return "1 argument"
	case s.min == s.max:
		return strconv.Itoa(s.min) + " arguments"
	}
	return strconv.Itoa(s.min) + " to " + strconv.Itoa(s.max) + " arguments"
}

// helperTable is every helper a template may call, indexed by id; any other
// name called with arguments is a compile error. Names, ids and functions
// come from here only.
var helperTable = [...]helperSpec{
	hIf:     {name: "if", min: 1, max: 1, blockOnly: true, js: true},
	hUnless: {name: "unless", min: 1, max: 1, blockOnly: true, js: true},
	hEach:   {name: "each", min: 1, max: 1, blockOnly: true, js: true},
	hWith:   {name: "with", min: 1, max: 1, blockOnly: true, js: true},
	hEqual:  {name: "equal", min: 2, max: 2, blockOnly: true},
	hLookup: {name: "lookup", min: 2, max: 2, noBlock: true, fn: Lookup, js: true},
	hLog:    {name: "log", min: 0, max: -1, noBlock: true, js: true},

	hUpper:     {name: "upper", min: 1, max: 1, fn: Upper},
	hLower:     {name: "lower", min: 1, max: 1, fn: Lower},
	hTitle:     {name: "title", min: 1, max: 1, fn: Title},
	hDefault:   {name: "default", min: 2, max: 2, fn: Default},
	hEq:        {name: "eq", min: 2, max: 2, fn: Eq},
	hNe:        {name: "ne", min: 2, max: 2, fn: Ne},
	hGt:        {name: "gt", min: 2, max: 2, fn: Gt},
	hLt:        {name: "lt", min: 2, max: 2, fn: Lt},
	hAnd:       {name: "and", min: 1, max: -1, fn: And},
	hOr:        {name: "or", min: 1, max: -1, fn: Or},
	hNot:       {name: "not", min: 1, max: 1, fn: Not},
	hLength:    {name: "length", min: 1, max: 1, fn: Length},
	hURL:       {name: "url", min: 1, max: 1, fn: URL},
	hStriptags: {name: "striptags", min: 1, max: 1, fn: Striptags},
	hDate:      {name: "date", min: 1, max: 2, fn: Date},
}

// helperIDs finds a helper's id by its name in helperTable.
var helperIDs = func() map[string]helperID {
	m := make(map[string]helperID, len(helperTable))
	for id, s := range helperTable {
		if id != 0 {
			m[s.name] = helperID(id)
		}
	}
	return m
}()

// Builtin reports whether name is a helper of this package (raymond's or
// postroom's own), which Options.Helpers cannot replace.
func Builtin(name string) bool {
	_, ok := helperIDs[name]
	return ok
}

// Upper returns the string form of args[0] in upper case.
func Upper(args []any) (any, error) {
	s, err := Str(args[0])
	return strings.ToUpper(s), err
}

// Lower returns the string form of args[0] in lower case.
func Lower(args []any) (any, error) {
	s, err := Str(args[0])
	return strings.ToLower(s), err
}

// Title returns the string form of args[0] with the first letter of each
// word (a run of non-space characters) in upper case; other letters are
// unchanged.
func Title(args []any) (any, error) {
	s, err := Str(args[0])
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.Grow(len(s))
	start := true
	for _, r := range s {
		if start && !unicode.IsSpace(r) {
			r = unicode.ToTitle(r)
		}
		start = unicode.IsSpace(r)
		b.WriteRune(r)
	}
	return b.String(), nil
}

// Default returns args[0] when it is truthy, else args[1].
func Default(args []any) (any, error) {
	if Truthy(args[0]) {
		return args[0], nil
	}
	return args[1], nil
}

// Eq reports whether args[0] and args[1] are equal: numerically when both
// are Go numbers, else when their string forms are equal.
func Eq(args []any) (any, error) { return equal(args[0], args[1], true) }

// Ne is the negation of Eq.
func Ne(args []any) (any, error) {
	eq, err := equal(args[0], args[1], true)
	return !eq, err
}

// equal reports whether a and b are equal: numerically when numbers is
// set and both are Go numbers, else when their string forms are equal
// (raymond's equal block helper compares string forms only).
func equal(a, b any, numbers bool) (bool, error) {
	if numbers {
		if x, ok := number(a); ok {
			if y, ok := number(b); ok {
				return x == y, nil
			}
		}
	}
	sa, err := Str(a)
	if err != nil {
		return false, err
	}
	sb, err := Str(b)
	return sa == sb, err
}

// Gt reports whether args[0] > args[1], both numbers or numeric strings;
// false otherwise.
func Gt(args []any) (any, error) {
	x, okx := numeric(args[0])
	y, oky := numeric(args[1])
	return okx && oky && x > y, nil
}

// Lt reports whether args[0] < args[1], both numbers or numeric strings;
// false otherwise.
func Lt(args []any) (any, error) {
	x, okx := numeric(args[0])
	y, oky := numeric(args[1])
	return okx && oky && x < y, nil
}

// And reports whether every argument is truthy.
func And(args []any) (any, error) {
	for _, a := range args {
		if !Truthy(a) {
			return false, nil
		}
	}
	return true, nil
}

// Or reports whether some argument is truthy.
func Or(args []any) (any, error) {
	for _, a := range args {
		if Truthy(a) {
			return true, nil
		}
	}
	return false, nil
}

// Not reports whether args[0] is falsy.
func Not(args []any) (any, error) { return !Truthy(args[0]), nil }

// Length returns the number of runes of a string, the length of an array,
// slice or map, and 0 for anything else.
func Length(args []any) (any, error) {
	switch v := args[0].(type) {
	case string:
		return utf8.RuneCountInString(v), nil
	case []any:
		return len(v), nil
	case map[string]any:
		return len(v), nil
	case *Object:
		return v.Len(), nil
	case nil, json.Number:
		return 0, nil
	}
	rv := reflect.ValueOf(args[0])
	for rv.Kind() == reflect.Pointer && !rv.IsNil() {
		rv = rv.Elem()
	}
	switch rv.Kind() {
	case reflect.String:
		return utf8.RuneCountInString(rv.String()), nil
	case reflect.Array, reflect.Slice, reflect.Map:
		return rv.Len(), nil
	}
	return 0, nil
}

// URL returns the string form of args[0] escaped with url.QueryEscape.
func URL(args []any) (any, error) {
	s, err := Str(args[0])
	return url.QueryEscape(s), err
}

// Striptags returns the string form of args[0] without its tags: each run
// from a '<' to the next '>' is removed; a '<' with no '>' after it is kept
// with the rest of the text.
func Striptags(args []any) (any, error) {
	s, err := Str(args[0])
	if err != nil || strings.IndexByte(s, '<') < 0 {
		return s, err
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '<')
		if i < 0 {
			break
		}
		j := strings.IndexByte(s[i:], '>')
		if j < 0 {
			break
		}
		b.WriteString(s[:i])
		s = s[i+j+1:]
	}
	b.WriteString(s)
	return b.String(), nil
}

// Date formats args[0], a time.Time, a *time.Time or an RFC 3339 string,
// with the Go layout args[1] (default "2006-01-02"). Anything else, or a
// string that does not parse, gives "".
func Date(args []any) (any, error) {
	layout := "2006-01-02"
	if len(args) > 1 {
		l, err := Str(args[1])
		if err != nil {
			return "", err
		}
		layout = l
	}
	var t time.Time
	switch v := args[0].(type) {
	case time.Time:
		t = v
	case *time.Time:
		if v == nil {
			return "", nil
		}
		t = *v
	case string:
		var err error
		if t, err = time.Parse(time.RFC3339, v); err != nil {
			return "", nil
		}
	default:
		return "", nil
	}
	return t.Format(layout), nil
}

// Lookup is handlebars.js's lookup helper: args[0] itself when it is
// falsy, else its own property named by the string form of args[1] (a map
// key, a struct field, an array index or length), nil when absent.
func Lookup(args []any) (any, error) {
	if !jsTruthy(args[0]) {
		return args[0], nil
	}
	field, err := Str(args[1])
	if err != nil {
		return nil, err
	}
	v, _ := fieldOf(args[0], field, nil)
	return v, nil
}

// number returns the value of a Go number.
func number(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int:
		return float64(x), true
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		return f, err == nil || errors.Is(err, strconv.ErrRange)
	case string:
		return 0, false
	}
	rv := reflect.ValueOf(v)
	if rv.IsValid() && rv.Type() == numberType {
		return number(json.Number(rv.String()))
	}
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return float64(rv.Int()), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return float64(rv.Uint()), true
	case reflect.Float32, reflect.Float64:
		return rv.Float(), true
	}
	return 0, false
}

// numeric returns the value of a Go number or of a string that
// strconv.ParseFloat accepts.
func numeric(v any) (float64, bool) {
	if f, ok := number(v); ok {
		return f, true
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.String {
		f, err := strconv.ParseFloat(rv.String(), 64)
		return f, err == nil
	}
	return 0, false
}
