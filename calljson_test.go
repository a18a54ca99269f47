package postroom

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/postroom/postroom/internal/workload"
)

// FuzzCallJSON checks the fast path of Call.UnmarshalJSON and
// Recipient.UnmarshalJSON against encoding/json through a struct of the
// same fields (the slow path, which the fast one must equal): the same
// Call or Recipient, order included, or an error from both. A decoded
// Call encodes back to JSON that decodes to it again.
func FuzzCallJSON(f *testing.F) {
	// The workload's call, cut to three recipients: the whole of it
	// makes each run slow.
	var w Call
	if err := json.Unmarshal(workload.Read(f), &w); err != nil {
		f.Fatal(err)
	}
	w.Recipients = w.Recipients[:3]
	small, err := json.Marshal(w)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(small)
	for _, s := range []string{
		`{}`, `null`, ` { "key" : "k" , "account_id":null } `, `{"key":"a","key":"b"}`, `{"Key":"a"}`,
		`{"recipients":[{"email":"a@x","name":"A","params":{"z":1,"a":{"y":1,"b":2},"1":3}},{"email":"b\u0040x"}]}`,
		`{"recipients":[{"email":"a","params":null},{"params":{}},{"Params":{"b":1,"a":2}},{"email":1}]}`,
		`{"global_params":{"b":1,"a":2,"b":3},"recipients":[]}`, `{"global_params":{"a":1e400}}`,
		`{"message":{"subject":"{{#each this}}{{@key}}{{/each}}","headers":[{"name":"X","value":"}]\""}]},"recipients":null}`,
		`{"recipients":[{"email":"é","name":"\ud83d\ude00","params":{"é":"\n"}}],"unknown":[1,{"a":"}"}]}`,
		`{"recipients":[{"email":"a"}`, `{"recipients":[{"email":"a",}]}`, `{"global_params":[]}`, `{"message":"x"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var fast, slow Call
		errFast, errSlow := fast.UnmarshalJSON(data), slow.decodeSlow(data)
		if (errFast == nil) != (errSlow == nil) {
			t.Fatalf("%q: fast path error %v, encoding/json's %v", data, errFast, errSlow)
		}
		if errFast == nil && !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%q: fast path %#v\nencoding/json %#v", data, fast, slow)
		}
		var rf, rs Recipient
		errFast, errSlow = rf.UnmarshalJSON(data), rs.decodeSlow(data)
		if (errFast == nil) != (errSlow == nil) {
			t.Fatalf("%q: recipient: fast path error %v, encoding/json's %v", data, errFast, errSlow)
		}
		if errFast == nil && !reflect.DeepEqual(rf, rs) {
			t.Fatalf("%q: recipient: fast path %#v\nencoding/json %#v", data, rf, rs)
		}
		if errSlow != nil || !json.Valid(data) {
			return
		}
		b, err := json.Marshal(fast)
		if err != nil {
			t.Fatalf("%q: %v", data, err)
		}
		var again Call
		if err := json.Unmarshal(b, &again); err != nil || !reflect.DeepEqual(again, fast) {
			t.Fatalf("%q encodes as %s, which decodes to %#v (%v), not %#v", data, b, again, err, fast)
		}
	})
}
