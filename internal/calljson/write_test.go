package calljson

import (
	"encoding/json"
	"errors"
	"testing"
)

// TestParams checks the order Params writes keys in: those of order the
// params have, once each, then the others sorted; without an order, as
// json.Marshal writes the map. Values are written as json.Marshal writes
// them, HTML characters escaped.
func TestParams(t *testing.T) {
	p := map[string]any{"b": 1, "a": "<x>", "z": true, "c": nil}
	for _, tc := range []struct {
		name  string
		order []string
		want  string
	}{
		{"no order", nil, `{"a":"\u003cx\u003e","b":1,"c":null,"z":true}`},
		{"all", []string{"z", "b", "a", "c"}, `{"z":true,"b":1,"a":"\u003cx\u003e","c":null}`},
		{"some, then sorted", []string{"z", "b"}, `{"z":true,"b":1,"a":"\u003cx\u003e","c":null}`},
		{"deleted and repeated keys", []string{"gone", "c", "c", "a"}, `{"c":null,"a":"\u003cx\u003e","b":1,"z":true}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := NewWriter()
			w.Params(p, tc.order)
			got, err := w.Bytes()
			if err != nil || string(got) != tc.want {
				t.Errorf("Params = %s, %v; want %s", got, err, tc.want)
			}
			if !json.Valid(got) {
				t.Errorf("%s is not JSON", got)
			}
		})
	}
	w := NewWriter()
	w.Params(nil, []string{"a"})
	if got, _ := w.Bytes(); string(got) != "null" {
		t.Errorf("nil params: %s, want null", got)
	}
}

// TestWriterError checks that the first error is kept and nothing is
// written after it.
func TestWriterError(t *testing.T) {
	w := NewWriter()
	w.Value(func() {})
	w.Value("after")
	got, err := w.Bytes()
	var ute *json.UnsupportedTypeError
	if err == nil || len(got) != 0 {
		t.Fatalf("Bytes = %q, %v; want nothing and an error", got, err)
	}
	if !errors.As(err, &ute) {
		t.Errorf("err = %T, want *json.UnsupportedTypeError", err)
	}
}
