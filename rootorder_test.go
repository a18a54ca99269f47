package postroom_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/testkit/hbsjs"
)

// rootEachText iterates the root context: at the top and through @root.
const rootEachText = "{{#each this}}{{@key}}={{this}};{{/each}}|{{#each @root}}{{@key}};{{/each}}"

// previewTexts returns the rendered text of each recipient of call.
func previewTexts(t *testing.T, call *postroom.Call) []string {
	t.Helper()
	m := newMailer(t, refuseTransport(t), postroom.Options{})
	idx := make([]int, len(call.Recipients))
	for i := range idx {
		idx[i] = i
	}
	p, err := m.Preview(t.Context(), postroom.OpSend, call, postroom.PreviewOptions{Recipients: idx})
	if err != nil {
		t.Fatal(err)
	}
	texts := make([]string, len(p.Recipients))
	for i, pr := range p.Recipients {
		texts[i] = pr.Text
	}
	return texts
}

// rootCallBody is a call body whose recipients have params (JSON objects
// or null) over globals.
func rootCallBody(globals string, params ...string) []byte {
	var b strings.Builder
	b.WriteString(`{"key":"k","account_id":"acct","message":{"from_email":"orders@shop.example.com","subject":"s","text":`)
	tb, _ := json.Marshal(rootEachText)
	b.Write(tb)
	b.WriteString(`},"global_params":` + globals + `,"recipients":[`)
	for i, p := range params {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"email":"r` + strconv.Itoa(i) + `@example.org","params":` + p + `}`)
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

// TestRootOrderHandlebarsJS is the oracle for the root context's key
// order: a call body decoded by DecodeCall and by json.Unmarshal renders
// {{#each}} over the root as handlebars.js renders it over
// Object.assign({}, global_params, params), with keys that interleave,
// override and are integer-like.
func TestRootOrderHandlebarsJS(t *testing.T) {
	js := hbsjs.Start(t)
	globals := `{"zeta":"g","2":"g","alpha":"g","mid":"g","10":"g"}`
	params := []string{
		`{"mid":"p","beta":"p","1":"p","zeta":"p","01":"p"}`,
		`null`,
		`{}`,
		`{"omega":"p","alpha":"p","0":"p","-1":"p","a b":"p","é":"p"}`,
	}
	body := rootCallBody(globals, params...)
	dec, err := postroom.DecodeCall(body)
	if err != nil {
		t.Fatal(err)
	}
	var un postroom.Call
	if err := json.Unmarshal(body, &un); err != nil {
		t.Fatal(err)
	}
	for name, call := range map[string]*postroom.Call{"DecodeCall": dec, "json.Unmarshal": &un} {
		for i, got := range previewTexts(t, call) {
			ref, err := js.RenderMerged(rootEachText, nil, json.RawMessage(globals), json.RawMessage(params[i]))
			if err != nil || ref.Err != "" {
				t.Fatal(err, ref.Err)
			}
			if got != ref.Out {
				t.Errorf("%s, recipient %d (params %s):\n got %q\nwant %q (handlebars.js)", name, i, params[i], got, ref.Out)
			}
		}
	}
}

// TestRootOrderChangedParams checks the order after a caller changes
// decoded params: the decoded keys still there keep their order, a
// deleted one is skipped, the added ones come after them, sorted (an
// integer-like one first, as always); and params built in Go are sorted.
func TestRootOrderChangedParams(t *testing.T) {
	call, err := postroom.DecodeCall(rootCallBody(`{"g2":1,"g1":1}`, `{"z":1,"m":1,"a":1}`))
	if err != nil {
		t.Fatal(err)
	}
	p := call.Recipients[0].Params
	delete(p, "m")
	p["y"], p["b"], p["7"] = 1, 1, 1
	call.GlobalParams["g0"] = 1
	built := postroom.Recipient{Email: "built@example.org", Params: postroom.Params{"z": 1, "a": 1, "3": 1}}
	call.Recipients = append(call.Recipients, built)
	got := previewTexts(t, call)
	want := []string{
		"7=1;g2=1;g1=1;g0=1;z=1;a=1;b=1;y=1;|7;g2;g1;g0;z;a;b;y;",
		"3=1;g2=1;g1=1;g0=1;a=1;z=1;|3;g2;g1;g0;a;z;",
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("recipient %d: got %q, want %q", i, got[i], want[i])
		}
	}
	goCall := &postroom.Call{Message: call.Message, GlobalParams: postroom.Params{"g": 1, "c": 1},
		Recipients: []postroom.Recipient{{Email: "a@example.org", Params: postroom.Params{"b": 1, "a": 1, "2": 1}}}}
	if got := previewTexts(t, goCall)[0]; got != "2=1;a=1;b=1;c=1;g=1;|2;a;b;c;g;" {
		t.Errorf("params built in Go: got %q, want all the keys sorted", got)
	}
}
