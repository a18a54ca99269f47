package program

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// plain turns the *Object values of v into maps, as encoding/json decodes
// objects.
func plain(v any) any {
	switch x := v.(type) {
	case *Object:
		m := make(map[string]any, x.Len())
		for k, e := range x.All() {
			m[k] = plain(e)
		}
		return m
	case []any:
		a := make([]any, len(x))
		for i, e := range x {
			a[i] = plain(e)
		}
		return a
	}
	return v
}

// keyOrders lists, for each object of a JSON document in the order its
// '{' appears, its keys in the order of their first occurrence, read with
// encoding/json's tokenizer: the order JSON.parse keeps. It returns false
// for a document with a key written twice in an object, whose replaced
// values it cannot tell apart.
func keyOrders(t *testing.T, b []byte) ([][]string, bool) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var orders [][]string
	type frame struct {
		obj   int // index in orders, -1 for an array
		isKey bool
	}
	var stack []frame
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return orders, true
		}
		if err != nil {
			t.Fatal(err)
		}
		top := len(stack) - 1
		if top >= 0 && stack[top].obj >= 0 && stack[top].isKey {
			if k, ok := tok.(string); ok {
				o := &orders[stack[top].obj]
				if contains(*o, k) {
					return nil, false
				}
				*o = append(*o, k)
				stack[top].isKey = false
				continue
			}
		}
		if top >= 0 && stack[top].obj >= 0 {
			stack[top].isKey = true // after a value, a key or '}'
		}
		switch tok {
		case json.Delim('{'):
			orders = append(orders, []string{})
			stack = append(stack, frame{obj: len(orders) - 1, isKey: true})
		case json.Delim('['):
			stack = append(stack, frame{obj: -1})
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			if top := len(stack) - 1; top >= 0 && stack[top].obj >= 0 {
				stack[top].isKey = true
			}
		}
	}
}

func contains(s []string, k string) bool {
	for _, x := range s {
		if x == k {
			return true
		}
	}
	return false
}

// objectOrders lists the keys of each *Object in v, depth first, in the
// order their '{' appeared in the JSON.
func objectOrders(v any, out [][]string) [][]string {
	switch x := v.(type) {
	case *Object:
		keys := []string{}
		for k := range x.All() {
			keys = append(keys, k)
		}
		out = append(out, keys)
		for _, e := range x.All() {
			out = objectOrders(e, out)
		}
	case []any:
		for _, e := range x {
			out = objectOrders(e, out)
		}
	}
	return out
}

// checkDecodeValue is the oracle of DecodeValue: it accepts exactly what
// encoding/json accepts, but for numbers beyond float64's range (refused
// with their path); it decodes the same values, with json.Number numbers;
// each object keeps its keys in the order of their first occurrence and
// Get finds each; and the result encodes back to JSON that decodes to the
// same value.
func checkDecodeValue(t *testing.T, b []byte) {
	t.Helper()
	got, err := DecodeValue(b)
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var want any
	jsonErr := dec.Decode(&want)
	if jsonErr == nil {
		if _, e := dec.Token(); e != io.EOF {
			jsonErr = errors.New("data after the value")
		}
	}
	var re *NumberRangeError
	switch {
	case errors.As(err, &re):
		// Malformed JSON after the number is not looked for: both
		// refuse such input, for one reason or the other.
		if f, e := strconv.ParseFloat(re.Number, 64); e == nil || !math.IsInf(f, 0) {
			t.Fatalf("%q: %s refused, within range", b, re.Number)
		}
		return
	case (err == nil) != (jsonErr == nil):
		t.Fatalf("%q: DecodeValue error %v, encoding/json error %v", b, err, jsonErr)
	case err != nil:
		var se *json.SyntaxError
		if !errors.As(err, &se) {
			t.Fatalf("%q: error %T %v, want a *json.SyntaxError", b, err, err)
		}
		return
	}
	if !reflect.DeepEqual(plain(got), want) {
		t.Fatalf("%q: decoded %#v, encoding/json %#v", b, plain(got), want)
	}
	if w, ok := keyOrders(t, b); ok && !reflect.DeepEqual(objectOrders(got, nil), w) && len(w) > 0 {
		t.Fatalf("%q: key orders %q, want %q", b, objectOrders(got, nil), w)
	}
	var checkGet func(v any)
	checkGet = func(v any) {
		switch x := v.(type) {
		case *Object:
			for k, e := range x.All() {
				if g, ok := x.Get(k); !ok || !reflect.DeepEqual(g, e) {
					t.Fatalf("%q: Get(%q) = %v, %v; want %v", b, k, g, ok, e)
				}
				checkGet(e)
			}
			if _, ok := x.Get("\x00absent"); ok {
				t.Fatalf("%q: Get finds an absent key", b)
			}
		case []any:
			for _, e := range x {
				checkGet(e)
			}
		}
	}
	checkGet(got)
	out, err := json.Marshal(got)
	if err != nil {
		t.Fatalf("%q: Marshal: %v", b, err)
	}
	again, err := DecodeValue(out)
	if err != nil || !reflect.DeepEqual(again, got) && !reflect.DeepEqual(plain(again), plain(got)) {
		t.Fatalf("%q: encodes as %s, which decodes to %#v (%v)", b, out, again, err)
	}
}

func TestDecodeValue(t *testing.T) {
	// A key written twice keeps its first place and its last value.
	v, err := DecodeValue([]byte(`{"a":1,"b":2,"a":3}`))
	if got, _ := json.Marshal(v); err != nil || string(got) != `{"a":3,"b":2}` {
		t.Errorf("repeated key: %s, %v", got, err)
	}
	many := `{"k":1,"j":2,"i":3,"h":4,"g":5,"f":6,"e":7,"d":8,"c":9,"b":10,"a":11,"c":12,"2":13,"10":14}`
	for _, s := range []string{
		`{}`, `[]`, `null`, `true`, `false`, `0`, `-0`, `1.5e3`, `"x"`, `"\u00e9\ud83d\ude00\n"`, "\"\xff\"", `"é"`,
		`{"b":1,"a":{"d":[1,{"z":null,"y":[]}],"c":"x"}}`, `{"a":1,"b":2,"a":3}`, many,
		`[` + many + `,` + many + `]`, `{"x":` + many + `,"x":{"a":1}}`,
		`1e308`, `-1.7976931348623157e308`, `1e309`, `1.7976931348623159e308`, `[1,{"a b":[0,1e400]}]`,
		"1" + strings.Repeat("0", 308), "1" + strings.Repeat("0", 309), `1e-400`, `0.` + strings.Repeat("0", 400) + "1",
		`{"a":}`, `{"a" 1}`, `{"a":1,}`, `[1,]`, `[1 2]`, `01`, `1.`, `-`, `1e`, `"a`, "\"\x01\"", `"\x"`, `{"a":1}x`,
		`nul`, `tru`, ` {"a" : [ 1 , 2 ] } `, ``, `{`, `[`, `{"a":[`,
	} {
		checkDecodeValue(t, []byte(s))
	}
}

func TestNumberRangePath(t *testing.T) {
	for _, tc := range []struct{ src, path string }{
		{`1e309`, ""},
		{`{"a":1e309}`, "a"},
		{`{"a":{"b":[1,[2,-1e309]]}}`, "a.b[1][1]"},
		{`[{"a b":1e309}]`, "[0].[a b]"},
		{`{"":{"x":1e309}}`, "[].x"},
	} {
		_, err := DecodeValue([]byte(tc.src))
		var re *NumberRangeError
		if !errors.As(err, &re) || re.Path != tc.path {
			t.Errorf("%s: %v; want a NumberRangeError at %q", tc.src, err, tc.path)
		}
	}
}

// FuzzDecodeValue checks checkDecodeValue's oracle on any input.
func FuzzDecodeValue(f *testing.F) {
	for _, s := range []string{`{"b":1,"a":[1,{"c":null}],"b":2}`, `[1e400]`, `{"k":1,"j":2,"i":3,"h":4,"g":5,"f":6,"e":7,"d":8,"c":9,"j":0}`, `"\ud800"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 4096 {
			return
		}
		checkDecodeValue(t, b)
	})
}
