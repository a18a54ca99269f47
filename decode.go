package postroom

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"

	"github.com/postroom/postroom/internal/calljson"
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
	if err := calljson.CheckShape(data, callType); err != nil {
		if se := (*calljson.ShapeError)(nil); errors.As(err, &se) {
			return nil, &ValidationError{Field: se.Field, Reason: se.Reason, Err: ErrInvalidJSON}
		}
		return nil, decodeError(err)
	}
	var call Call
	// As json.Unmarshal, without its pass that checks the JSON, which
	// calljson.CheckShape has done.
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
