package postroom_test

import (
	"errors"
	"net/mail"
	"strings"
	"testing"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/postroomtest"
	"github.com/postroom/postroom/transport"
)

// TestListIDHeader: ListID writes RFC 2919's shape, quoting or encoding
// its description as a phrase needs, and a message carries it as given:
// Go's net/mail reads the description back, and the Prepared reports the
// id lower-cased.
func TestListIDHeader(t *testing.T) {
	for _, tc := range []struct {
		desc, id, value, readBack string
	}{
		{"Shop news", "news.shop.example.com", "Shop news <news.shop.example.com>", "Shop news"},
		{"", "news.shop.example.com", "<news.shop.example.com>", ""},
		{"News, deals & more", "deals.shop.example.com", `"News, deals & more" <deals.shop.example.com>`, "News, deals & more"},
		{`Say "hi"`, "hi.localhost", `"Say \"hi\"" <hi.localhost>`, `Say "hi"`},
		{"Café news", "cafe.shop.example.com", "=?utf-8?b?Q2Fmw6kgbmV3cw==?= <cafe.shop.example.com>", "Café news"},
	} {
		h := postroom.ListID(tc.desc, tc.id)
		if h.Name != "List-Id" || h.Value != tc.value {
			t.Errorf("ListID(%q, %q) = %+v, want List-Id: %s", tc.desc, tc.id, h, tc.value)
			continue
		}
		call := smallCall("ann@example.net")
		call.Message.Headers = []postroom.Header{h}
		r, msg := sendOne(t, call)
		if msg == nil {
			t.Errorf("%q: %+v", tc.value, r)
			continue
		}
		got := msg.Header.Get("List-Id")
		if got != tc.value {
			t.Errorf("%q: the message carries List-Id %q", tc.value, got)
		}
		// net/mail reads a phrase and an angle address; a list id is no
		// address, so read the phrase alone.
		phrase := strings.TrimSpace(got[:strings.LastIndexByte(got, '<')])
		if phrase != "" {
			a, err := mail.ParseAddress(phrase + " <x@y.example>")
			if err != nil || a.Name != tc.readBack {
				t.Errorf("%q: the description reads back as %q (%v), want %q", tc.value, a.Name, err, tc.readBack)
			}
		}
	}

	m := newMailer(t, transport.NewMemory(), postroom.Options{})
	call := smallCall("ann@example.net")
	call.Message.Headers = []postroom.Header{{Name: "list-id", Value: " Shop <News.Shop.Example.COM> "}}
	p, err := m.Prepare(t.Context(), postroom.OpSend, call)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.List(); got != "news.shop.example.com" {
		t.Errorf("List() = %q, want the id lower-cased", got)
	}
	p, err = m.Prepare(t.Context(), postroom.OpSend, smallCall("ann@example.net"))
	if err != nil || p.List() != "" {
		t.Errorf("a transactional call: List() = %q, %v", p.List(), err)
	}
}

// TestListIDRefused: a List-Id that is not RFC 2919's shape, holds a
// placeholder, or comes twice refuses the call with a *ValidationError
// naming the header, and nothing is sent.
func TestListIDRefused(t *testing.T) {
	long := strings.Repeat("a", 250) + ".example"
	for _, tc := range []struct {
		headers []postroom.Header
		field   string
	}{
		{[]postroom.Header{{Name: "List-Id", Value: "news.shop.example.com"}}, "message.headers[0].value"},
		{[]postroom.Header{{Name: "List-Id", Value: "Shop <news>"}}, "message.headers[0].value"},
		{[]postroom.Header{{Name: "List-Id", Value: "<news..example.com>"}}, "message.headers[0].value"},
		{[]postroom.Header{{Name: "List-Id", Value: "<.news.example.com>"}}, "message.headers[0].value"},
		{[]postroom.Header{{Name: "List-Id", Value: "<news.example.com.>"}}, "message.headers[0].value"},
		{[]postroom.Header{{Name: "List-Id", Value: "<news(x).example.com>"}}, "message.headers[0].value"},
		{[]postroom.Header{{Name: "List-Id", Value: "<>"}}, "message.headers[0].value"},
		{[]postroom.Header{{Name: "List-Id", Value: "<" + long + ">"}}, "message.headers[0].value"},
		{[]postroom.Header{{Name: "List-Id", Value: "a<b> <news.example.com>"}}, "message.headers[0].value"},
		{[]postroom.Header{{Name: "List-Id", Value: "Café <news.example.com>"}}, "message.headers[0].value"},
		{[]postroom.Header{{Name: "List-Id", Value: "<{{list}}.example.com>"}}, "message.headers[0].value"},
		{[]postroom.Header{{Name: "X-A", Value: "a"}, postroom.ListID("", "a.example.com"), {Name: "LIST-ID", Value: "<b.example.com>"}}, "message.headers[2]"},
	} {
		mem := transport.NewMemory()
		m := newMailer(t, mem, postroom.Options{})
		call := smallCall("ann@example.net")
		call.Message.Headers = tc.headers
		results, err := m.Send(t.Context(), call)
		var ve *postroom.ValidationError
		if !errors.As(err, &ve) || ve.Field != tc.field {
			t.Errorf("%+v: %v, want a ValidationError on %s", tc.headers, err, tc.field)
		}
		if results != nil || len(mem.Envelopes()) != 0 {
			t.Errorf("%+v: sent %d messages", tc.headers, len(mem.Envelopes()))
		}
	}
}

// TestSuppressionScopes: the entries of every scope come back from the
// lookup; a list message is stopped by its own list's, by all lists' and
// by all mail's, a transactional message only by all mail's; the widest
// entry names the reason; events carry the list.
func TestSuppressionScopes(t *testing.T) {
	at := listed.Add(-time.Hour)
	list := staleList{
		{Address: "ann@example.net", Reason: postroom.ReasonUnsub, Scope: postroom.ScopeList, List: "news.shop.example.com", Created: at},
		{Address: "bob@example.net", Reason: postroom.ReasonSpam, Scope: postroom.ScopeLists, Created: at},
		{Address: "cy@example.net", Reason: postroom.ReasonHardBounce, Detail: "550 5.1.1 user unknown", Created: at},
		{Address: "dan@example.net", Reason: postroom.ReasonUnsub, Scope: postroom.ScopeList, List: "deals.shop.example.com", Created: at},
		{Address: "eve@example.net", Reason: postroom.ReasonUnsub, Scope: postroom.ScopeList, List: "news.shop.example.com", Created: at},
		{Address: "eve@example.net", Reason: postroom.ReasonManual, Scope: postroom.ScopeAll, Created: at},
		{Address: "fay@example.net", Reason: postroom.ReasonManual, Scope: "some-later-scope", Created: at},
	}
	addrs := []string{"ann@example.net", "bob@example.net", "cy@example.net", "dan@example.net", "eve@example.net", "fay@example.net", "gus@example.net"}
	for _, tc := range []struct {
		name string
		call *postroom.Call
		list string
		want map[string]string // address: the rejected Result's reason; absent: sent
	}{
		{"newsletter", listCall(addrs...), "news.shop.example.com", map[string]string{
			"ann@example.net": "unsub: suppressed from list news.shop.example.com since 2026-11-20",
			"bob@example.net": "spam: suppressed from all lists since 2026-11-20",
			"cy@example.net":  "hard-bounce: suppressed since 2026-11-20: 550 5.1.1 user unknown",
			"eve@example.net": "manual: suppressed since 2026-11-20",
			"fay@example.net": "manual: suppressed since 2026-11-20",
		}},
		{"receipt", smallCall(addrs...), "", map[string]string{
			"cy@example.net":  "hard-bounce: suppressed since 2026-11-20: 550 5.1.1 user unknown",
			"eve@example.net": "manual: suppressed since 2026-11-20",
			"fay@example.net": "manual: suppressed since 2026-11-20",
		}},
	} {
		mem := transport.NewMemory()
		got := &events{}
		m := newMailer(t, mem, postroom.Options{Suppressions: list, OnEvent: got.add, Now: func() time.Time { return listed }})
		results, err := m.Send(t.Context(), tc.call)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		for _, r := range results {
			want, rejected := tc.want[r.Email]
			switch {
			case rejected && (r.Status != postroom.StatusRejected || r.Reason != want):
				t.Errorf("%s: %s: %s %q, want rejected %q", tc.name, r.Email, r.Status, r.Reason, want)
			case !rejected && r.Status != postroom.StatusSent:
				t.Errorf("%s: %s: %s %q, want sent", tc.name, r.Email, r.Status, r.Reason)
			}
			var se *postroom.SuppressedError
			if rejected && (!errors.As(r.Err, &se) || !se.Suppression.Covers(tc.list)) {
				t.Errorf("%s: %s: Err %v", tc.name, r.Email, r.Err)
			}
			if e := got.by[r.Email]; e.List != tc.list {
				t.Errorf("%s: %s: event %s with list %q, want %q", tc.name, r.Email, e.Type, e.List, tc.list)
			}
			if r.Status == postroom.StatusSent {
				env, _ := mem.Envelope(r.SendID)
				if h := postroomtest.Parse(t, env.Data).Header.Get("List-Id"); (h != "") != (tc.list != "") {
					t.Errorf("%s: %s: List-Id %q", tc.name, r.Email, h)
				}
			}
		}
	}
}

// TestSuppressionScopeBCC: a bcc address listed for the call's list is
// dropped from a list message's envelopes and kept in a transactional
// message's.
func TestSuppressionScopeBCC(t *testing.T) {
	list := staleList{{Address: "archive@shop.example.com", Reason: postroom.ReasonUnsub, Scope: postroom.ScopeLists, Created: listed.Add(-time.Hour)}}
	for _, call := range []*postroom.Call{listCall("ann@example.net"), smallCall("ann@example.net")} {
		call.Message.BCC = "archive@shop.example.com"
		mem := transport.NewMemory()
		m := newMailer(t, mem, postroom.Options{Suppressions: list, Now: func() time.Time { return listed }})
		results, err := m.Send(t.Context(), call)
		if err != nil || results[0].Status != postroom.StatusSent {
			t.Fatalf("%+v, %v", results, err)
		}
		env, _ := mem.Envelope(results[0].SendID)
		isList := len(call.Message.Headers) > 0
		if hasBCC := len(env.To) == 2; hasBCC == isList {
			t.Errorf("list mail %v: envelope recipients %v", isList, env.To)
		}
	}
}
