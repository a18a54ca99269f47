package postroom

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/postroom/postroom/internal/testkit/workload"
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

// TestMarshalAsStruct checks that a Call without an order (built in Go)
// encodes byte for byte as encoding/json encodes a struct of its fields,
// as it did before it had a MarshalJSON, and that a decoded one encodes
// its params in the order of its JSON.
func TestMarshalAsStruct(t *testing.T) {
	var c Call
	if err := json.Unmarshal(workload.Read(t), &c); err != nil {
		t.Fatal(err)
	}
	type recipientFields struct {
		Email  string `json:"email"`
		Name   string `json:"name"`
		Params Params `json:"params"`
	}
	type callFields struct {
		Key          string            `json:"key"`
		AccountID    string            `json:"account_id"`
		Message      Message           `json:"message"`
		Recipients   []recipientFields `json:"recipients"`
		GlobalParams Params            `json:"global_params"`
	}
	c.Message.Subject += " <&> \u2028"
	c.globalOrder = nil
	mirror := callFields{c.Key, c.AccountID, c.Message, nil, c.GlobalParams}
	for i := range c.Recipients {
		c.Recipients[i].order = nil
		r := c.Recipients[i]
		mirror.Recipients = append(mirror.Recipients, recipientFields{r.Email, r.Name, r.Params})
	}
	got, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	want, err := json.Marshal(mirror)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("a Call without an order encodes as\n%.300s\nnot as a struct of its fields:\n%.300s", got, want)
	}
	var d Call
	if err := json.Unmarshal([]byte(`{"global_params":{"z":1,"a":2},"recipients":[{"params":{"y":"<","b":null,"1":[]}}]}`), &d); err != nil {
		t.Fatal(err)
	}
	d.Recipients[0].Params["c"] = true
	got, err = json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"key":"","account_id":"","message":` + string(must(json.Marshal(d.Message))) +
		`,"recipients":[{"email":"","name":"","params":{"y":"\u003c","b":null,"1":[],"c":true}}],"global_params":{"z":1,"a":2}}`; string(got) != want {
		t.Errorf("decoded call encodes as\n%s\nwant\n%s", got, want)
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}
