package postroom

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"

	"github.com/postroom/postroom/internal/program"
	"github.com/postroom/postroom/option"
)

// Custom template helpers: the public face of internal/program's Helper.
//
// A helper is a Go function with typed parameters (HelperFunc1 and its
// siblings), so that its arity is known when a template is compiled, and a
// call with the wrong number of arguments is refused with the call, before
// anything is sent, naming the field and the position. Arguments are
// converted to the parameters' types when the helper is called; a value
// that does not convert, an error the function returns, or a panic makes
// that recipient invalid with reason render-error, never the call. The
// general form, HelperFuncN, takes any number of arguments, hash arguments
// and a block.

// ErrHelperArgument: a template passed a helper an argument that does not
// convert to the type of the helper's parameter (a string that is not a
// number for a float64, an object for a string). The recipient is
// invalid, render-error, its Reason saying which argument of which helper
// and what it was (never its value), such as "render-error: text:
// argument 1 of money is a string, not a number"; its Result.Err wraps
// ErrHelperArgument.
var ErrHelperArgument = errors.New("postroom: helper argument of the wrong type")

// SafeHTML is a string a helper returns to have it written as is in an
// html part, where any other string is HTML-escaped by {{helper ...}}
// (though not by {{{helper ...}}}). Text parts never escape.
type SafeHTML string

// Helper is a template helper registered in Options.Helpers. Build one
// with HelperFunc0, HelperFunc1, HelperFunc2, HelperFunc3 or HelperFuncN;
// the zero Helper is refused by New. A Helper's function is called from
// the Mailer's render workers, possibly from several at once: it must be
// safe for concurrent use, and should not block (it gets no context).
//
// A registered helper is called wherever its name stands in helper
// position, even with no arguments, as in handlebars.js: a helper named
// year shadows a param named year in {{year}}; {{this.year}} is the param.
type Helper struct {
	h program.Helper
}

// HelperFunc0 is a helper of no arguments, such as {{year}}.
func HelperFunc0[R any](f func() (R, error)) Helper {
	return Helper{program.Helper{Func: func(c *program.HelperCall) (any, error) {
		r, err := f()
		return result(r, err)
	}}}
}

// HelperFunc1 is a helper of one argument, converted to A (see HelperCall
// for the conversions), such as {{initials name}}.
func HelperFunc1[A, R any](f func(A) (R, error)) Helper {
	return Helper{program.Helper{Min: 1, Max: 1, Func: func(c *program.HelperCall) (any, error) {
		a, err := convertArg[A](c, 0)
		if err != nil {
			return nil, err
		}
		r, err := f(a)
		return result(r, err)
	}}}
}

// HelperFunc2 is a helper of two arguments, such as {{money total
// currency}} with f a func(amount float64, currency string) (string,
// error).
func HelperFunc2[A, B, R any](f func(A, B) (R, error)) Helper {
	return Helper{program.Helper{Min: 2, Max: 2, Func: func(c *program.HelperCall) (any, error) {
		a, err := convertArg[A](c, 0)
		if err != nil {
			return nil, err
		}
		b, err := convertArg[B](c, 1)
		if err != nil {
			return nil, err
		}
		r, err := f(a, b)
		return result(r, err)
	}}}
}

// HelperFunc3 is a helper of three arguments, each converted as
// HelperFunc1's, such as {{clamp low x high}} with f a func(low, x, high
// float64) (float64, error).
func HelperFunc3[A, B, C, R any](f func(A, B, C) (R, error)) Helper {
	return Helper{program.Helper{Min: 3, Max: 3, Func: func(c *program.HelperCall) (any, error) {
		a, err := convertArg[A](c, 0)
		if err != nil {
			return nil, err
		}
		b, err := convertArg[B](c, 1)
		if err != nil {
			return nil, err
		}
		d, err := convertArg[C](c, 2)
		if err != nil {
			return nil, err
		}
		r, err := f(a, b, d)
		return result(r, err)
	}}}
}

// HelperFuncN is the general form: a helper of min to max arguments (max
// < 0: no maximum) that may take hash arguments (name=value) and open a
// block ({{#name}}...{{else}}...{{/name}}). f reads them from c.
func HelperFuncN(min, max int, f func(c *HelperCall) (any, error)) Helper {
	return Helper{program.Helper{Min: min, Max: max, Hash: true, Block: true, Func: func(pc *program.HelperCall) (any, error) {
		return result(f(&HelperCall{c: pc}))
	}}}
}

// HelperCall is one call of a HelperFuncN helper: its arguments, hash and
// block. It is valid during the call only, and not safe for concurrent use.
//
// The accessors convert as the typed helpers convert their parameters:
// String gives the string form handlebars prints (numbers as 3 or 2.5,
// booleans as true, nil and absent values as "") and refuses an object,
// or an array holding one, which would print as [object Object]; Float
// and Int accept numbers and numeric strings (Int only whole values); Bool gives
// handlebars' truthiness (false for nil, false, 0, "" and empty arrays).
// A conversion that fails returns an error wrapping ErrHelperArgument.
type HelperCall struct {
	c *program.HelperCall
}

// Len returns the number of positional arguments.
func (c *HelperCall) Len() int { return len(c.c.Args) }

// Arg returns argument i as the data holds it (string, json.Number,
// float64, bool, nil, *Object, []any, map[string]any, or the Go value of
// the params); nil when i is out of range.
func (c *HelperCall) Arg(i int) any {
	if i < 0 || i >= len(c.c.Args) {
		return nil
	}
	return publicValue(c.c.Args[i])
}

// publicValue turns the evaluator's unescaped string, the value of a
// helper that returned SafeHTML, back into a SafeHTML.
func publicValue(v any) any {
	if r, ok := v.(program.Raw); ok {
		return SafeHTML(r)
	}
	return v
}

// String returns argument i's string form.
func (c *HelperCall) String(i int) (string, error) { return convertArg[string](c.c, i) }

// Float returns argument i as a number.
func (c *HelperCall) Float(i int) (float64, error) { return convertArg[float64](c.c, i) }

// Int returns argument i as a whole number.
func (c *HelperCall) Int(i int) (int, error) { return convertArg[int](c.c, i) }

// Bool returns argument i's truthiness.
func (c *HelperCall) Bool(i int) bool { return program.Truthy(c.Arg(i)) }

// Hash returns hash argument key ({{name key=value}}) and whether the call
// passed it.
func (c *HelperCall) Hash(key string) (any, bool) {
	v, ok := c.c.Hash[key]
	return publicValue(v), ok
}

// Block reports whether the helper was called as a block.
func (c *HelperCall) Block() bool { return c.c.Block() }

// Fn renders the block with ctx as its context (nil: the current one) and
// returns the output, already escaped where the part is HTML; "" when the
// helper was not called as a block. What a block helper returns is
// written as is, never escaped again.
func (c *HelperCall) Fn(ctx any) (string, error) { return c.c.Fn(ctx) }

// Inverse renders the block's {{else}} part like Fn.
func (c *HelperCall) Inverse(ctx any) (string, error) { return c.c.Inverse(ctx) }

// result is a helper's value for the evaluator: SafeHTML becomes the
// evaluator's unescaped string.
func result[R any](r R, err error) (any, error) {
	if err != nil {
		return nil, err
	}
	if s, ok := any(r).(SafeHTML); ok {
		return program.Raw(s), nil
	}
	return r, nil
}

// convertArg converts argument i of c to T: a string gets the string form,
// a number type a number (from a number or a numeric string), bool the
// truthiness, an interface type the value if it implements it, any other
// type the value if it is of that type.
func convertArg[T any](c *program.HelperCall, i int) (T, error) {
	var zero T
	var v any
	if i >= 0 && i < len(c.Args) {
		v = publicValue(c.Args[i])
	}
	if x, ok := v.(T); ok {
		return x, nil
	}
	if o, ok := v.(*Object); ok && o != nil {
		// A decoded JSON object for a map parameter: its members, as
		// json.Unmarshal into a map would give them.
		m := make(map[string]any, o.Len())
		for k, x := range o.All() {
			m[k] = x
		}
		if x, ok := any(m).(T); ok {
			return x, nil
		}
	}
	t := reflect.TypeFor[T]()
	bad := func(want string) (T, error) {
		return zero, &argumentError{helper: c.Name, index: i, got: describe(v), want: want}
	}
	out := reflect.New(t).Elem()
	switch t.Kind() {
	case reflect.Interface:
		if v == nil {
			return zero, nil
		}
		return bad(t.String())
	case reflect.String:
		if program.HoldsObject(v) {
			// It would print as [object Object]: no string the helper
			// could use.
			return bad("a string")
		}
		s, err := program.Str(v)
		if err != nil {
			return bad("printable")
		}
		out.SetString(s)
	case reflect.Bool:
		out.SetBool(program.Truthy(v))
	case reflect.Float32, reflect.Float64:
		f, ok := toFloat(v)
		if !ok {
			return bad("a number")
		}
		out.SetFloat(f)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		f, ok := toFloat(v)
		if !ok || f != math.Trunc(f) || out.OverflowInt(int64(f)) || math.Abs(f) >= 1<<63 {
			return bad("a whole number")
		}
		out.SetInt(int64(f))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		f, ok := toFloat(v)
		if !ok || f != math.Trunc(f) || f < 0 || f >= 1<<64 || out.OverflowUint(uint64(f)) {
			return bad("a whole number of at least 0")
		}
		out.SetUint(uint64(f))
	default:
		return bad(t.String())
	}
	return out.Interface().(T), nil
}

// argumentError is a helper argument that does not convert to its
// parameter's type. Its detail is in the template's terms (the helper's
// name, the argument's position, the kinds of value), never the value
// itself, which may be a recipient's data: a recipient's Reason shows it.
type argumentError struct {
	helper    string
	index     int // 0-based
	got, want string
}

func (e *argumentError) Error() string { return ErrHelperArgument.Error() + ": " + e.detail() }

// detail is the error for the caller, as a Reason's detail.
func (e *argumentError) detail() string {
	return fmt.Sprintf("argument %d of %s is %s, not %s", e.index+1, e.helper, e.got, e.want)
}

// Is makes the error match ErrHelperArgument.
func (e *argumentError) Is(target error) bool { return target == ErrHelperArgument }

// toFloat returns the value of a Go number or of a numeric string.
func toFloat(v any) (float64, bool) {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Float32, reflect.Float64:
		return rv.Float(), true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return float64(rv.Int()), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return float64(rv.Uint()), true
	case reflect.String:
		f, err := strconv.ParseFloat(strings.TrimSpace(rv.String()), 64)
		return f, err == nil && !math.IsInf(f, 0) && !math.IsNaN(f)
	}
	return 0, false
}

// describe names a value's kind for an error, without its content (which
// may be a recipient's data).
func describe(v any) string {
	switch v.(type) {
	case nil:
		return "empty"
	case string:
		return "a string"
	case map[string]any, *Object:
		return "an object"
	case []any:
		return "an array"
	}
	return "a " + reflect.TypeOf(v).String()
}

// checkHelpers checks Options.Helpers and fills o.programHelpers, the
// evaluator's copy. A name must be one a template can call: an identifier
// that is not a built-in helper's.
func (o *Options) checkHelpers() error {
	if len(o.Helpers) == 0 {
		o.Helpers = nil
		return nil
	}
	o.programHelpers = make(map[string]*program.Helper, len(o.Helpers))
	helpers := make(map[string]Helper, len(o.Helpers))
	for name, h := range o.Helpers {
		switch {
		case h.h.Func == nil:
			return option.Errorf(opNew, fmt.Sprintf("Options.Helpers[%q]", name), "is the zero Helper: build it with HelperFunc1 or its siblings")
		case !helperName(name):
			return option.Errorf(opNew, fmt.Sprintf("Options.Helpers[%q]", name), "is not a name a template can call (letters, digits, _ and -, not a number, not this or else)")
		case program.Builtin(name):
			return option.Errorf(opNew, fmt.Sprintf("Options.Helpers[%q]", name), "is the name of a built-in helper")
		}
		hh := h.h
		o.programHelpers[name] = &hh
		helpers[name] = h
	}
	o.Helpers = helpers // New's copy: the caller's map may change afterwards
	return nil
}

// helperName reports whether name is an identifier a template calls as a
// helper: {{name}} parses to a simple path of that one part.
func helperName(name string) bool {
	switch name {
	case "", "this", "else", "true", "false", "null", "undefined", "as":
		return false
	}
	if _, err := strconv.ParseFloat(name, 64); err == nil {
		return false
	}
	for _, r := range name {
		if !(r == '_' || r == '-' || r == '$' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r > 0x7f) {
			return false
		}
	}
	return true
}
