package postroom_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"testing"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/workload"
)

func TestDecodeCall(t *testing.T) {
	for _, tc := range []struct {
		name string
		body string
		path string // "" when the body fits
	}{
		{"empty object", `{}`, ""},
		{"nulls everywhere", `{"key":null,"message":null,"recipients":null,"global_params":null}`, ""},
		{"null elements", `{"recipients":[null,{"email":null,"params":null}]}`, ""},
		{"free-form params", `{"global_params":{"a":{"b":[1,{"c":null}]},"message":1},"recipients":[{"params":{"htmll":true}}]}`, ""},
		{"unknown deep", `{"message":{"images":[{"cid":"a"},{"cid":"b","x":1}]}}`, "message.images[1].x"},
		{"unknown after nested params", `{"recipients":[{"params":{"a":[{"b":1}]},"nmae":"x"}]}`, "recipients[0].nmae"},
		{"repeated in message", `{"message":{"subject":"a","subject":"b"}}`, "message.subject"},
		{"same key in two recipients", `{"recipients":[{"email":"a"},{"email":"b"}]}`, ""},
		{"bool for string", `{"message":{"bcc":true}}`, "message.bcc"},
		{"string for object", `{"message":"hi"}`, "message"},
		{"string for list", `{"message":{"headers":"X-A: 1"}}`, "message.headers"},
		{"number for header", `{"message":{"headers":[{"name":"X","value":1}]}}`, "message.headers[0].value"},
		{"top-level string", `"call"`, "(body)"},
		{"number beyond float64", `{"global_params":{"a":{"b":[1,1e400]}}}`, "global_params.a.b[1]"},
		{"number beyond float64 in a recipient", `{"recipients":[{},{"params":{"x":-1.5e999}}]}`, "recipients[1].params.x"},
		{"long integer", `{"global_params":{"a":123456789012345678901234567890}}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := postroom.DecodeCall([]byte(tc.body))
			var ve *postroom.ValidationError
			switch {
			case tc.path == "" && err != nil:
				t.Errorf("DecodeCall: %v; want nil", err)
			case tc.path != "" && (!errors.As(err, &ve) || !errors.Is(err, postroom.ErrInvalidJSON)):
				t.Errorf("DecodeCall: %v; want a ValidationError at %s wrapping ErrInvalidJSON", err, tc.path)
			case tc.path != "" && ve.Field != tc.path:
				t.Errorf("path %q; want %q", ve.Field, tc.path)
			}
		})
	}

	for _, tc := range []struct{ name, body string }{
		{"truncated", `{"message":{"subject":"a"`},
		{"trailing data", `{} x`},
		{"bad token", `{"key":tru}`},
		{"empty", ``},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var syn *json.SyntaxError
			_, err := postroom.DecodeCall([]byte(tc.body))
			if !errors.Is(err, postroom.ErrInvalidJSON) || !errors.As(err, &syn) && !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("DecodeCall: %v; want a syntax error wrapping ErrInvalidJSON", err)
			}
		})
	}
}

// FuzzDecodeCall: DecodeCall accepts a body only if encoding/json, with
// unknown fields refused, decodes it into a Call, to the same Call; and a
// body that encoding/json decodes is refused by DecodeCall only for its shape
// (a repeated or miscased key), never as malformed JSON.
func FuzzDecodeCall(f *testing.F) {
	f.Add(workload.Read(f))
	for _, s := range []string{
		`{}`, `null`, `{"message":{"htmll":1}}`, `{"recipients":[{"email":"a","params":{"x":[1]}}]}`,
		`{"global_params":{"a":1e400}}`, `{"message":{"headers":[{"name":"a"}],"images":[{}]}}`,
		`{"Key":"a"}`, `{"key":"a","key":"b"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, shapeErr := postroom.DecodeCall(data)
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		dec.UseNumber()
		var call postroom.Call
		jsonErr := dec.Decode(&call)
		if _, err := dec.Token(); jsonErr == nil && err != io.EOF {
			jsonErr = errors.New("trailing data")
		}
		var typeErr *json.UnmarshalTypeError
		if shapeErr == nil && jsonErr != nil && !errors.As(jsonErr, &typeErr) {
			// A number too large for float64 in params is the one type
			// error checkShape leaves to encoding/json.
			t.Fatalf("DecodeCall accepted %q, encoding/json refused it: %v", data, jsonErr)
		}
		if shapeErr == nil && jsonErr == nil && !reflect.DeepEqual(*got, call) {
			t.Fatalf("DecodeCall and encoding/json decode %q differently", data)
		}
		var ve *postroom.ValidationError
		if jsonErr == nil && shapeErr != nil && !errors.As(shapeErr, &ve) {
			t.Fatalf("encoding/json decoded %q, DecodeCall found it malformed: %v", data, shapeErr)
		}
	})
}

// TestDecodeCallKeepsIntegers: numbers in params decode as json.Number, so
// that an integer beyond float64's precision keeps its value.
func TestDecodeCallKeepsIntegers(t *testing.T) {
	call, err := postroom.DecodeCall([]byte(`{"global_params":{"id":9007199254740993,"f":2.50},"recipients":[{"params":{"n":[-0,12]}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := call.GlobalParams["id"]; got != json.Number("9007199254740993") {
		t.Errorf("id = %#v, want json.Number(\"9007199254740993\")", got)
	}
	if got := call.GlobalParams["f"]; got != json.Number("2.50") {
		t.Errorf("f = %#v, want json.Number(\"2.50\")", got)
	}
	if got := call.Recipients[0].Params["n"]; !reflect.DeepEqual(got, []any{json.Number("-0"), json.Number("12")}) {
		t.Errorf("n = %#v", got)
	}
}
