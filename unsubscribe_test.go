package postroom_test

import (
	"slices"
	"testing"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/mailtest"
	"github.com/postroom/postroom/transport"
)

// TestOneClickCallLevel checks the one-click unsubscribe headers that can
// be judged for the whole call: the ValidationError names the header.
func TestOneClickCallLevel(t *testing.T) {
	post := postroom.Header{Name: "List-Unsubscribe-Post", Value: "List-Unsubscribe=One-Click"}
	list := func(v string) postroom.Header { return postroom.Header{Name: "List-Unsubscribe", Value: v} }
	for _, tc := range []struct {
		name    string
		headers []postroom.Header
		fields  []string // nil: the call is accepted
	}{
		{"https", []postroom.Header{list("<https://shop.example.com/u/1>"), post}, nil},
		{"https and mailto", []postroom.Header{list("<mailto:u@shop.example.com>, <https://shop.example.com/u/1>"), post}, nil},
		{"https per recipient", []postroom.Header{post, list("<https://shop.example.com/u/{{name}}>")}, nil},
		{"placeholder for the whole URI", []postroom.Header{post, list("<{{unsub}}>")}, nil},
		{"lower-case names", []postroom.Header{{Name: "list-unsubscribe", Value: "<https://x.example/u>"}, {Name: "list-unsubscribe-post", Value: "List-Unsubscribe=One-Click"}}, nil},
		{"mailto without post", []postroom.Header{list("<mailto:u@shop.example.com>")}, nil},
		{"post without list", []postroom.Header{post}, []string{"message.headers[0]"}},
		{"post value", []postroom.Header{list("<https://x.example/u>"), {Name: "List-Unsubscribe-Post", Value: "One-Click"}}, []string{"message.headers[1].value"}},
		{"post value templated", []postroom.Header{list("<https://x.example/u>"), {Name: "List-Unsubscribe-Post", Value: "{{v}}"}}, []string{"message.headers[1].value"}},
		{"mailto only", []postroom.Header{list("<mailto:u@shop.example.com>"), post}, []string{"message.headers[0].value"}},
		{"http", []postroom.Header{list("<http://shop.example.com/u/1>"), post}, []string{"message.headers[0].value"}},
		{"not a list", []postroom.Header{list("https://shop.example.com/u/1"), post}, []string{"message.headers[0].value"}},
		{"https without host", []postroom.Header{list("<https:///u/1>"), post}, []string{"message.headers[0].value"}},
		{"templated mailto", []postroom.Header{list("<mailto:u+{{name}}@shop.example.com>"), post}, []string{"message.headers[0].value"}},
		{"templated http", []postroom.Header{list("<http://shop.example.com/u/{{name}}>"), post}, []string{"message.headers[0].value"}},
		{"two posts", []postroom.Header{list("<https://x.example/u>"), post, post}, []string{"message.headers[2]"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			call := smallCall("ann@example.net")
			call.Recipients[0].Params["unsub"] = "https://shop.example.com/u/ann"
			call.Message.Headers = tc.headers
			results, err := newMailer(t, transport.NewMemory(), postroom.Options{}).Send(t.Context(), call)
			var fields []string
			for _, ve := range postroom.ValidationErrors(err) {
				fields = append(fields, ve.Field)
			}
			if !slices.Equal(fields, tc.fields) {
				t.Fatalf("fields %q, want %q (err %v)", fields, tc.fields, err)
			}
			if tc.fields == nil && (err != nil || results[0].Status != postroom.StatusSent) {
				t.Fatalf("results %+v, err %v", results, err)
			}
		})
	}
}

// TestOneClickPerRecipient checks a List-Unsubscribe value that only the
// rendering decides: a recipient whose value holds no https URI is
// invalid (render-error), the others are sent with their own URL.
func TestOneClickPerRecipient(t *testing.T) {
	call := smallCall("ann@example.net", "bob@example.org", "cy@example.org")
	call.Message.Headers = []postroom.Header{
		{Name: "X-Campaign", Value: "c{{name}}"},
		{Name: "List-Unsubscribe", Value: "<{{unsub}}>"},
		{Name: "List-Unsubscribe-Post", Value: "List-Unsubscribe=One-Click"},
	}
	urls := []string{"https://shop.example.com/u/ann", "mailto:unsubscribe@shop.example.com", "http://shop.example.com/u/cy"}
	for i := range call.Recipients {
		call.Recipients[i].Params = map[string]any{"name": "N", "unsub": urls[i]}
	}
	mem := transport.NewMemory()
	results, err := newMailer(t, mem, postroom.Options{}).Send(t.Context(), call)
	if err != nil {
		t.Fatal(err)
	}
	if results[0].Status != postroom.StatusSent {
		t.Fatalf("recipient 0: %+v", results[0])
	}
	for _, r := range results[1:] {
		if r.Status != postroom.StatusInvalid || r.Code != postroom.ReasonRenderError {
			t.Errorf("%s: %+v, want invalid render-error", r.Email, r)
		}
	}
	env, _ := mem.Envelope(results[0].SendID)
	msg := mailtest.Parse(t, env.Data)
	if got := msg.Header.Get("List-Unsubscribe"); got != "<"+urls[0]+">" {
		t.Errorf("List-Unsubscribe %q", got)
	}
	if got := msg.Header.Get("List-Unsubscribe-Post"); got != "List-Unsubscribe=One-Click" {
		t.Errorf("List-Unsubscribe-Post %q", got)
	}
}
