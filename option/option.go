// Package option is how every postroom constructor checks and defaults its
// Options struct, and the one error type they refuse one with.
//
// The rules, the same in every package of the module:
//
//   - A zero field means the default its documentation names.
//   - A negative number is refused with an *Error, except in a field whose
//     documentation gives it a meaning ("a negative value turns off what
//     the field bounds"); such a field is kept as -1.
//   - A nil Logger discards: Logger returns slog.New(slog.DiscardHandler).
//   - Every field a constructor refuses is an *Error, found with
//     errors.As; its Field is the path of the field from the struct
//     ("Options.VERP.Domain", "SMTPOptions.Retry.Attempts").
//
// The root package aliases Error as postroom.OptionsError. The package
// imports only the standard library, so that every package of the module
// can use it.
package option

import (
	"fmt"
	"log/slog"
)

// Error is a constructor's refusal of a field of its options: Op names the
// constructor ("postroom.New", "transport.NewSMTP"), Field the field's path
// from the options struct ("Options.MaxRecipients", "Options.DKIM[0].Key"),
// Reason what is wrong with it ("is negative (-1)"), and Err the error or
// sentinel behind it, if any. It is a plain value, safe to share once
// made; the zero value is not a meaningful error.
type Error struct {
	Op     string
	Field  string
	Reason string
	Err    error
}

// Error reads "Op: Field Reason", followed by ": " and Err when Err is not
// nil.
func (e *Error) Error() string {
	s := e.Op + ": " + e.Field + " " + e.Reason
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns e.Err.
func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error for op's field, its Reason formatted from
// format and args as fmt.Sprintf does. An Error with an Err behind it is
// written as a literal.
func Errorf(op, field, format string, args ...any) error {
	return &Error{Op: op, Field: field, Reason: fmt.Sprintf(format, args...)}
}

// Number is the kinds of field Default and DefaultOrOff take: integers,
// time.Duration and floats.
type Number interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64 | ~float32 | ~float64
}

// Default applies the rule for a number field with no meaning for a
// negative value: it sets *v to def when *v is zero, and returns an *Error
// (Reason "is negative (…)") when *v is negative or NaN, leaving *v as it
// was.
func Default[T Number](op, field string, v *T, def T) error {
	switch {
	case *v < 0 || *v != *v:
		return &Error{Op: op, Field: field, Reason: fmt.Sprintf("is negative (%v)", *v)}
	case *v == 0:
		*v = def
	}
	return nil
}

// DefaultOrOff applies the rule for a number field whose documentation
// says that a negative value turns off what it bounds: it sets *v to def
// when *v is zero and to -1 when *v is negative. It returns an *Error only
// for NaN.
func DefaultOrOff[T Number](op, field string, v *T, def T) error {
	switch {
	case *v != *v:
		return &Error{Op: op, Field: field, Reason: "is NaN"}
	case *v < 0:
		*v = -1
	case *v == 0:
		*v = def
	}
	return nil
}

// Logger returns l, or, when l is nil, a logger that discards every record
// (slog.New(slog.DiscardHandler)): the rule for every Options.Logger of
// the module.
func Logger(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}
