package calljson

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzScan holds the scanner to encoding/json on valid JSON: SkipValue
// ends a value where encoding/json does, and StringValue reads a string
// as json.Unmarshal reads it.
func FuzzScan(f *testing.F) {
	for _, seed := range []string{
		`{"a":[1,2,{"b":"c\"}"}],"d":null}`, ` "caf\u00e9" `, `"a\\"`, `true`, ` -1.5e3 `,
		`[[],{}]`, `"tab\tnot allowed raw"`, `"Ünïcode"`, `{"k":"v"} `,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) {
			return
		}
		start := SkipSpace(b, 0)
		end, ok := SkipValue(b, start)
		if !ok || SkipSpace(b, end) != len(b) {
			t.Fatalf("SkipValue(%q, %d) = %d, %v; want the end of the value", b, start, end, ok)
		}
		if b[start] != '"' {
			return
		}
		var want string
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatal(err)
		}
		got, next, ok := StringValue(b, start)
		if !ok || got != want || next != end {
			t.Fatalf("StringValue(%q) = %q, %d, %v; json.Unmarshal gives %q, end %d", b, got, next, ok, want, end)
		}
		if raw, _, ok := RawString(b, start); ok && !bytes.Equal(raw, []byte(want)) {
			t.Fatalf("RawString(%q) = %q; json.Unmarshal gives %q", b, raw, want)
		}
	})
}

// TestKeyAfter reads the members of objects and arrays with Key and After.
func TestKeyAfter(t *testing.T) {
	for _, tc := range []struct {
		in   string
		keys []string
		ok   bool
	}{
		{`{"a": 1 , "b":2}`, []string{"a", "b"}, true},
		{`{"a":1}`, []string{"a"}, true},
		{`{"a" 1}`, nil, false},
		{`{"a":`, nil, false},
		{`{"a":1;`, []string{"a"}, false},
		{`{"a\"b":1}`, nil, false}, // an escape: for encoding/json
	} {
		b := []byte(tc.in)
		var keys []string
		ok := false
		for i := 1; ; {
			key, v, kok := Key(b, i)
			if !kok {
				break
			}
			keys = append(keys, string(key))
			end, vok := SkipValue(b, v)
			if !vok {
				break
			}
			next, more, aok := After(b, end, '}')
			if !aok {
				break
			}
			if !more {
				ok = next == len(b)
				break
			}
			i = next
		}
		if ok != tc.ok || len(keys) != len(tc.keys) {
			t.Errorf("%s: keys %q, ok %v; want %q, %v", tc.in, keys, ok, tc.keys, tc.ok)
			continue
		}
		for i := range keys {
			if keys[i] != tc.keys[i] {
				t.Errorf("%s: keys %q, want %q", tc.in, keys, tc.keys)
			}
		}
	}
}
