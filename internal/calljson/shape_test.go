package calljson

import (
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"testing"
)

type shapeInner struct {
	Name string `json:"name"`
}

type shapeOuter struct {
	ID     string         `json:"id"`
	Inner  shapeInner     `json:"inner"`
	List   []shapeInner   `json:"list"`
	Params map[string]any `json:"params"`
	Any    any            `json:"any"`
	Skip   string         `json:"-"`
	NoTag  string
}

// TestCheckShape checks the paths and reasons of bodies of the wrong
// shape, and the errors of bodies that are not JSON.
func TestCheckShape(t *testing.T) {
	typ := reflect.TypeFor[shapeOuter]()
	for _, tc := range []struct {
		body, field, reason string
	}{
		{`{"id":"x","inner":{"name":"n"},"list":[{"name":"a"}],"params":{"k":[1]},"any":[{}],"NoTag":"t"}`, "", ""},
		{`{"id":null,"inner":null,"list":null,"params":null}`, "", ""},
		{`[]`, "(body)", "must be a JSON object"},
		{`{"ID":"x"}`, "ID", "unknown field"},
		{`{"Skip":"x"}`, "Skip", "unknown field"},
		{`{"id":"x","id":"y"}`, "id", "repeated field"},
		{`{"id":1}`, "id", "must be a string"},
		{`{"inner":"x"}`, "inner", "must be an object"},
		{`{"list":{}}`, "list", "must be an array"},
		{`{"list":[{"name":"a"},{"nam":"b"}]}`, "list[1].nam", "unknown field"},
		{`{"params":[]}`, "params", "must be an object"},
	} {
		err := CheckShape([]byte(tc.body), typ)
		var se *ShapeError
		switch {
		case tc.field == "" && err != nil:
			t.Errorf("%s: %v, want nil", tc.body, err)
		case tc.field != "" && (!errors.As(err, &se) || se.Field != tc.field || se.Reason != tc.reason):
			t.Errorf("%s: %v, want %s: %s", tc.body, err, tc.field, tc.reason)
		}
	}
	var syn *json.SyntaxError
	if err := CheckShape([]byte(`{"id":"x"} {}`), typ); !errors.As(err, &syn) {
		t.Errorf("two values: %v, want a *json.SyntaxError", err)
	}
	if err := CheckShape([]byte(`{"id":"x"`), typ); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("cut short: %v, want io.ErrUnexpectedEOF", err)
	}
}
