package postroom_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/postroomtest"
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
	msg := postroomtest.Parse(t, env.Data)
	if got := msg.Header.Get("List-Unsubscribe"); got != "<"+urls[0]+">" {
		t.Errorf("List-Unsubscribe %q", got)
	}
	if got := msg.Header.Get("List-Unsubscribe-Post"); got != "List-Unsubscribe=One-Click" {
		t.Errorf("List-Unsubscribe-Post %q", got)
	}
}

// unsubURLs is an Options.Unsubscribe that makes a URL from the account
// and address, and fails for the addresses in fail (package unsubscribe's
// Unsubscriber, which the root may not import, is tested with a Mailer in
// that package).
type unsubURLs struct {
	base string
	fail map[string]bool
}

func (u unsubURLs) URL(accountID, address, list string) (string, error) {
	if u.fail[address] {
		return "", errors.New("no token for " + address)
	}
	if list == "" {
		list = "all"
	}
	return u.base + accountID + "/" + list + "/" + address, nil
}

// listCall is smallCall as mail of the list news.shop.example.com.
func listCall(emails ...string) *postroom.Call {
	call := smallCall(emails...)
	call.Message.Headers = append(call.Message.Headers, postroom.ListID("Shop news", "News.Shop.example.com"))
	return call
}

// TestUnsubscribeOption: with Options.Unsubscribe, a list call without
// List-Unsubscribe gets both one-click fields per recipient, with the
// recipient's URL for the list, DKIM-signed; a recipient whose URL fails
// or is not https is invalid while the others are sent; a call that
// writes its own List-Unsubscribe keeps it.
func TestUnsubscribeOption(t *testing.T) {
	signers, records := testSigners(t)
	urls := unsubURLs{base: "https://shop.example.com/u/", fail: map[string]bool{"cy@example.org": true}}
	mem := transport.NewMemory()
	m := newMailer(t, mem, postroom.Options{DKIM: signers, Unsubscribe: urls})

	call := listCall("ann@example.net", "bob@example.org", "cy@example.org")
	results, err := m.Send(t.Context(), call)
	if err != nil {
		t.Fatal(err)
	}
	if r := results[2]; r.Status != postroom.StatusInvalid || r.Code != postroom.ReasonRenderError || r.SendID != "" {
		t.Errorf("cy, whose URL fails: %+v, want invalid render-error and no message", r)
	}
	for _, r := range results[:2] {
		if r.Status != postroom.StatusSent {
			t.Fatalf("%s: %+v", r.Email, r)
		}
		env, _ := mem.Envelope(r.SendID)
		msg := postroomtest.Parse(t, env.Data)
		if got, want := msg.Header.Get("List-Unsubscribe"), "<https://shop.example.com/u/acct/news.shop.example.com/"+r.Email+">"; got != want {
			t.Errorf("%s: List-Unsubscribe %q, want %q", r.Email, got, want)
		}
		if got := msg.Header.Get("List-Unsubscribe-Post"); got != "List-Unsubscribe=One-Click" {
			t.Errorf("%s: List-Unsubscribe-Post %q", r.Email, got)
		}
		if oks := verifyDKIMGo(t, records, env.Data); !slices.Equal(oks, []bool{true, true}) {
			t.Errorf("%s: go-msgauth verified %v", r.Email, oks)
		}
		for _, h := range signedHeaders(t, env.Data) {
			if !slices.Contains(h, "List-Unsubscribe") || !slices.Contains(h, "List-Unsubscribe-Post") {
				t.Errorf("%s: h=%v does not cover the unsubscribe fields", r.Email, h)
			}
		}
	}

	// A URL that is not https is refused per recipient.
	m = newMailer(t, mem, postroom.Options{Unsubscribe: unsubURLs{base: "http://shop.example.com/u/"}})
	results, err = m.Send(t.Context(), listCall("ann@example.net"))
	if err != nil {
		t.Fatal(err)
	}
	if r := results[0]; r.Status != postroom.StatusInvalid || r.Code != postroom.ReasonRenderError {
		t.Errorf("http URL: %+v, want invalid render-error", r)
	}

	// A call with its own List-Unsubscribe keeps it, and gets no second.
	m = newMailer(t, mem, postroom.Options{Unsubscribe: urls})
	call = listCall("ann@example.net")
	call.Message.Headers = append(call.Message.Headers, postroom.Header{Name: "list-unsubscribe", Value: "<mailto:u@shop.example.com>"})
	results, err = m.Send(t.Context(), call)
	if err != nil || results[0].Status != postroom.StatusSent {
		t.Fatalf("own header: %+v, %v", results, err)
	}
	env, _ := mem.Envelope(results[0].SendID)
	msg := postroomtest.Parse(t, env.Data)
	if got := msg.Header["List-Unsubscribe"]; !slices.Equal(got, []string{"<mailto:u@shop.example.com>"}) {
		t.Errorf("own header: List-Unsubscribe %q", got)
	}
	if got := msg.Header.Get("List-Unsubscribe-Post"); got != "" {
		t.Errorf("own header: List-Unsubscribe-Post %q added", got)
	}
}

// TestUnsubscribeTransactional: Options.Unsubscribe writes nothing into a
// transactional message (no List-Id), and writes a URL with an empty
// list into it under Options.UnsubscribeAllMail.
func TestUnsubscribeTransactional(t *testing.T) {
	urls := unsubURLs{base: "https://shop.example.com/u/"}
	mem := transport.NewMemory()
	for _, all := range []bool{false, true} {
		m := newMailer(t, mem, postroom.Options{Unsubscribe: urls, UnsubscribeAllMail: all})
		results, err := m.Send(t.Context(), smallCall("ann@example.net"))
		if err != nil || results[0].Status != postroom.StatusSent {
			t.Fatalf("all=%v: %+v, %v", all, results, err)
		}
		env, _ := mem.Envelope(results[0].SendID)
		msg := postroomtest.Parse(t, env.Data)
		got, post := msg.Header.Get("List-Unsubscribe"), msg.Header.Get("List-Unsubscribe-Post")
		switch {
		case !all && (got != "" || post != ""):
			t.Errorf("a receipt got List-Unsubscribe %q, List-Unsubscribe-Post %q", got, post)
		case all && got != "<https://shop.example.com/u/acct/all/ann@example.net>":
			t.Errorf("UnsubscribeAllMail: List-Unsubscribe %q", got)
		case all && post != "List-Unsubscribe=One-Click":
			t.Errorf("UnsubscribeAllMail: List-Unsubscribe-Post %q", post)
		}
	}
}
