package postroom

import (
	"errors"

	"github.com/postroom/postroom/internal/program"
)

// Params are template parameters: a Call's global_params or a recipient's
// params. A Go caller fills them like any map (Params{"first_name": "Ada"}
// or a map[string]any); decoding JSON (json.Unmarshal into a Call, or
// DecodeCall) fills them with what JSON.parse would give handlebars.js:
// objects as *Object, which keep the order of their keys, arrays as []any,
// numbers as json.Number (integers keep every digit), strings, booleans
// and nil.
//
// {{#each}} visits a decoded object's keys in handlebars.js's order (keys
// that are array indexes first, in numeric order, then the others as
// written); it visits the keys of a Go map, which has no order, the same
// way but with the others sorted. The params themselves are a Go map:
// decoding a Call or a Recipient keeps the order of their keys beside it,
// so that {{#each}} over the root context (this at the top, @root) visits
// them as handlebars.js visits Object.assign({}, global_params, params):
// integer-like keys first, then the global keys in their order (a key the
// params override keeps its place), then the params' new keys in theirs.
// A key added after decoding comes after the decoded ones, sorted; a
// deleted one is skipped. Params a Go caller builds have no order: their
// keys are sorted. Params.UnmarshalJSON alone keeps no order (it has
// nowhere to).
//
// A number is accepted when its value is within float64's range (as
// JSON.parse gives a finite number): 1e308 and an integer of 308 digits
// are accepted, 1e309 and an integer of 310 digits refused.
type Params map[string]any

// Object is a decoded JSON object, in Params: its members keep their
// order. It is read-only: build a map to change params.
type Object = program.Object

// UnmarshalJSON decodes a JSON object (null leaves p as it is), as the
// Params doc says. A number beyond float64's range gives a
// *ValidationError whose Field is its path within the params ("order.total",
// "items[2].price") and wraps ErrInvalidJSON; malformed JSON a
// *json.SyntaxError.
func (p *Params) UnmarshalJSON(b []byte) error {
	m, err := program.DecodeMap(b)
	if err != nil {
		var re *program.NumberRangeError
		if errors.As(err, &re) {
			return &ValidationError{Field: re.Path, Reason: numberReason(re), Err: ErrInvalidJSON}
		}
		return err
	}
	if m != nil {
		*p = m
	}
	return nil
}

// numberReason is the Reason of a number beyond float64's range.
func numberReason(re *program.NumberRangeError) string {
	n := re.Number
	if len(n) > 40 {
		n = n[:20] + "..."
	}
	return "number " + n + " is beyond float64's range"
}
