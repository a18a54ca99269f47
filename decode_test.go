package postroom_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/testkit/workload"
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
		{"number beyond float64 under an odd key", `{"recipients":[{"params":{"a b":[{"c":1e309}]}}]}`, "recipients[0].params.[a b][0].c"},
		{"long integer", `{"global_params":{"a":123456789012345678901234567890}}`, ""},
		{"largest float64", `{"global_params":{"a":1.7976931348623157e308,"b":-1.7976931348623157e308}}`, ""},
		{"just beyond the largest float64", `{"global_params":{"a":1.7976931348623159e308}}`, "global_params.a"},
		{"integer of 308 digits", `{"global_params":{"a":` + "9" + strings.Repeat("9", 307) + `}}`, ""},
		{"integer of 309 digits within range", `{"global_params":{"a":1` + strings.Repeat("0", 308) + `}}`, ""},
		{"integer of 310 digits", `{"global_params":{"a":1` + strings.Repeat("0", 309) + `}}`, "global_params.a"},
		{"integer of 100,000 digits", `{"global_params":{"a":-1` + strings.Repeat("0", 99_999) + `}}`, "global_params.a"},
		{"underflow to zero", `{"global_params":{"a":1e-400}}`, ""},
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
		if shapeErr == nil && jsonErr != nil {
			t.Fatalf("DecodeCall accepted %q, encoding/json refused it: %v", data, jsonErr)
		}
		if shapeErr == nil && jsonErr == nil && !reflect.DeepEqual(*got, call) {
			t.Fatalf("DecodeCall and encoding/json decode %q differently", data)
		}
		var ve *postroom.ValidationError
		if jsonErr == nil && shapeErr != nil && !errors.As(shapeErr, &ve) {
			t.Fatalf("encoding/json decoded %q, DecodeCall found it malformed: %v", data, shapeErr)
		}
		if jsonErr == nil && shapeErr == nil {
			// Same JSON out: params encode back to what was decoded.
			for i, p := range append([]postroom.Params{got.GlobalParams}, paramsOf(got.Recipients)...) {
				b, err := json.Marshal(p)
				if err != nil {
					t.Fatalf("params %d: %v", i, err)
				}
				var again postroom.Params
				if err := json.Unmarshal(b, &again); err != nil || !reflect.DeepEqual(again, p) {
					t.Fatalf("params %d: %s decodes to %#v, not %#v (%v)", i, b, again, p, err)
				}
			}
		}
	})
}

func paramsOf(rs []postroom.Recipient) []postroom.Params {
	var ps []postroom.Params
	for _, r := range rs {
		ps = append(ps, r.Params)
	}
	return ps
}

// TestParamsKeepOrder: objects in params, decoded by DecodeCall or
// json.Unmarshal, keep their keys' order (a key written twice keeps its
// first place and last value, as JSON.parse does) and encode back in it;
// {{#each}} visits them in that order, array indexes first.
func TestParamsKeepOrder(t *testing.T) {
	body := `{"global_params":{"totals":{"subtotal":1,"tax":2,"b":3,"a":4,"tax":5,"2":6,"1":7}}}`
	viaDecode, err := postroom.DecodeCall([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	var viaUnmarshal postroom.Call
	if err := json.Unmarshal([]byte(body), &viaUnmarshal); err != nil {
		t.Fatal(err)
	}
	for name, call := range map[string]*postroom.Call{"DecodeCall": viaDecode, "json.Unmarshal": &viaUnmarshal} {
		o, ok := call.GlobalParams["totals"].(*postroom.Object)
		if !ok {
			t.Fatalf("%s: totals is %T, want *postroom.Object", name, call.GlobalParams["totals"])
		}
		var keys []string
		for k := range o.All() {
			keys = append(keys, k)
		}
		if got, want := strings.Join(keys, ","), "subtotal,tax,b,a,2,1"; got != want {
			t.Errorf("%s: keys %s, want %s", name, got, want)
		}
		if v, _ := o.Get("tax"); v != json.Number("5") {
			t.Errorf("%s: tax = %v, want the last value, 5", name, v)
		}
		out, err := json.Marshal(call.GlobalParams)
		if err != nil {
			t.Fatal(err)
		}
		if want := `{"totals":{"subtotal":1,"tax":5,"b":3,"a":4,"2":6,"1":7}}`; string(out) != want {
			t.Errorf("%s: encodes as %s, want %s", name, out, want)
		}
	}
}

// TestParamsNumberBound: json.Unmarshal refuses a number beyond float64's
// range as DecodeCall does, with a ValidationError naming its path within
// the params.
func TestParamsNumberBound(t *testing.T) {
	var call postroom.Call
	err := json.Unmarshal([]byte(`{"recipients":[{"params":{"items":[{"price":1e309}]}}]}`), &call)
	var ve *postroom.ValidationError
	if !errors.As(err, &ve) || !errors.Is(err, postroom.ErrInvalidJSON) || ve.Field != "items[0].price" {
		t.Fatalf("json.Unmarshal: %v; want a ValidationError at items[0].price", err)
	}
	if err := json.Unmarshal([]byte(`{"recipients":[{"params":{"n":1e308}}]}`), &call); err != nil {
		t.Fatal(err)
	}
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
