package suppression_test

import (
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/suppression"
	"github.com/postroom/postroom/transport"
)

// The scope cases of the contract (runContract).
var scopeContract = []struct {
	name string
	test func(t *testing.T, newList newList)
}{
	{"ScopeTable", testScopeTable},
	{"ScopeAddDelete", testScopeAddDelete},
	{"ScopeListPages", testScopeListPages},
	{"ScopeListFilters", testScopeListFilters},
	{"ScopeLookup", testScopeLookup},
	{"ScopePrecedence", testScopePrecedence},
	{"ScopeRefused", testScopeRefused},
}

// Lists of the scope cases: news is the list the observations are about,
// deals another list of the same sender.
const (
	news  = "news.shop.example.com"
	deals = "deals.shop.example.com"
)

// mail is a kind of message the scope cases send: transactional (list
// ""), or list mail of a list.
type mail struct {
	name, list string
}

var mails = []mail{{"transactional", ""}, {"news", news}, {"deals", deals}}

// rejecter answers, through a real Mailer over l, whether a message of
// list to addr is rejected, and with which reason: Validate does the
// call's one lookup and keeps the entries that cover the message.
func rejecter(t *testing.T, l suppression.List, c *clock) func(acct, list, addr string) (postroom.ReasonCode, bool) {
	m, err := postroom.New(transport.NewMemory(), postroom.Options{Auth: postroom.NoAuth{}, Suppressions: l, Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	return func(acct, list, addr string) (postroom.ReasonCode, bool) {
		t.Helper()
		call := &postroom.Call{AccountID: acct, Message: postroom.Message{FromEmail: "shop@shop.example.com", Subject: "s", Text: "t"},
			Recipients: []postroom.Recipient{{Email: addr}}}
		if list != "" {
			call.Message.Headers = []postroom.Header{postroom.ListID("", list)}
		}
		results, err := m.Validate(t.Context(), postroom.OpSend, call)
		if err != nil {
			t.Fatalf("Validate: %v", err)
		}
		if len(results) != 1 || results[0].Status == postroom.StatusInvalid {
			t.Fatalf("Validate: %+v; want one valid recipient", results)
		}
		return results[0].Code, results[0].Status == postroom.StatusRejected
	}
}

// testScopeTable checks each row of the table: what came back
// about an address, and which of its mail is rejected then (transactional,
// the list it was about, another list).
func testScopeTable(t *testing.T, newList newList) {
	c := newClock()
	l := newList(t, suppression.Options{Now: c.Now})
	a := account(t, "a")
	rejects := rejecter(t, l, c)
	obs := func(o suppression.Observation) func(t *testing.T, addr string) {
		return func(t *testing.T, addr string) {
			t.Helper()
			for range 3 { // soft bounces count to 3; the others are listed at the first
				o.AccountID, o.Address = a, addr
				if _, err := l.Observe(t.Context(), o); err != nil {
					t.Fatal(err)
				}
				if o.Kind != suppression.SoftBounce {
					return
				}
			}
		}
	}
	add := func(scope postroom.Scope, list string) func(t *testing.T, addr string) {
		return func(t *testing.T, addr string) {
			t.Helper()
			mustAdd(t, l, suppression.Entry{AccountID: a, Address: addr, Scope: scope, List: list})
		}
	}
	all := []string{"transactional", "news", "deals"}
	for i, tt := range []struct {
		name       string
		do         func(t *testing.T, addr string)
		reason     postroom.ReasonCode
		scope      postroom.Scope
		list       string
		suppresses []string // the mails rejected; the others are sent
	}{
		{"hard bounce of a list message", obs(suppression.Observation{Kind: suppression.HardBounce, List: news}), postroom.ReasonHardBounce, postroom.ScopeAll, "", all},
		{"hard bounce of a transactional message", obs(suppression.Observation{Kind: suppression.HardBounce}), postroom.ReasonHardBounce, postroom.ScopeAll, "", all},
		{"soft bounces past the policy", obs(suppression.Observation{Kind: suppression.SoftBounce, List: news}), postroom.ReasonSoftBounce, postroom.ScopeAll, "", all},
		{"one-click unsubscribe from a list", obs(suppression.Observation{Kind: suppression.Unsubscribe, List: "News.Shop.Example.com"}), postroom.ReasonUnsub, postroom.ScopeList, news, []string{"news"}},
		{"unsubscribe from all lists", obs(suppression.Observation{Kind: suppression.Unsubscribe, List: news, Scope: postroom.ScopeLists}), postroom.ReasonUnsub, postroom.ScopeLists, "", []string{"news", "deals"}},
		{"unsubscribe naming no list", obs(suppression.Observation{Kind: suppression.Unsubscribe}), postroom.ReasonUnsub, postroom.ScopeLists, "", []string{"news", "deals"}},
		{"complaint about a list message", obs(suppression.Observation{Kind: suppression.Complaint, List: news}), postroom.ReasonSpam, postroom.ScopeLists, "", []string{"news", "deals"}},
		{"complaint about a transactional message", obs(suppression.Observation{Kind: suppression.Complaint}), postroom.ReasonSpam, postroom.ScopeAll, "", all},
		{"manual, all mail", add("", ""), postroom.ReasonManual, postroom.ScopeAll, "", all},
		{"manual, all lists", add(postroom.ScopeLists, ""), postroom.ReasonManual, postroom.ScopeLists, "", []string{"news", "deals"}},
		{"manual, one list", add(postroom.ScopeList, "<NEWS.shop.example.com>"), postroom.ReasonManual, postroom.ScopeList, news, []string{"news"}},
	} {
		addr := fmt.Sprintf("row%02d@example.com", i) // an address per row
		t.Run(tt.name, func(t *testing.T) {
			for _, m := range mails {
				if _, rejected := rejects(a, m.list, addr); rejected {
					t.Fatalf("%s mail rejected before anything came back", m.name)
				}
			}
			tt.do(t, addr)
			page, _, err := l.List(t.Context(), suppression.Query{AccountID: a, Prefix: addr})
			if err != nil {
				t.Fatal(err)
			}
			if len(page) != 1 || page[0].Reason != tt.reason || page[0].Scope != tt.scope || page[0].List != tt.list {
				t.Errorf("entries %+v; want one, %s of scope %q list %q", page, tt.reason, tt.scope, tt.list)
			}
			for _, m := range mails {
				code, rejected := rejects(a, m.list, addr)
				want := slices.Contains(tt.suppresses, m.name)
				if rejected != want || rejected && code != tt.reason {
					t.Errorf("%s mail: rejected %v (%s); want rejected %v (%s)", m.name, rejected, code, want, tt.reason)
				}
			}
		})
	}
}

// testScopeAddDelete: an address has an entry per scope and list; Add
// replaces the entry of its key alone, Delete with a scope removes that
// entry alone, and without one every entry of the address.
func testScopeAddDelete(t *testing.T, newList newList) {
	c := newClock()
	l := newList(t, suppression.Options{Now: c.Now})
	a := account(t, "a")
	rejects := rejecter(t, l, c)
	addr := "ann@example.com"
	mustAdd(t, l, suppression.Entry{AccountID: a, Address: addr, Reason: postroom.ReasonHardBounce})
	mustAdd(t, l, suppression.Entry{AccountID: a, Address: addr, Reason: postroom.ReasonSpam, Scope: postroom.ScopeLists})
	mustAdd(t, l, suppression.Entry{AccountID: a, Address: addr, Reason: postroom.ReasonUnsub, Scope: postroom.ScopeList, List: news})
	mustAdd(t, l, suppression.Entry{AccountID: a, Address: addr, Reason: postroom.ReasonUnsub, Scope: postroom.ScopeList, List: deals})
	// The same key again: the entry replaced, the others kept.
	e := mustAdd(t, l, suppression.Entry{AccountID: a, Address: "ANN@example.com", Detail: "by hand", Scope: postroom.ScopeList, List: "News.Shop.Example.COM"})
	if e.Scope != postroom.ScopeList || e.List != news || e.Reason != postroom.ReasonManual {
		t.Errorf("Add kept %+v; want scope list, list %s lower-cased, manual", e, news)
	}
	listed := func() string {
		t.Helper()
		page, _, err := l.List(t.Context(), suppression.Query{AccountID: a, IncludeExpired: true})
		if err != nil {
			t.Fatal(err)
		}
		s := ""
		for _, e := range page {
			s += fmt.Sprintf("[%s %s %s %s]", e.Address, e.Scope, e.List, e.Reason)
		}
		return s
	}
	want := "[ann@example.com all  hard-bounce][ann@example.com list deals.shop.example.com unsub][ann@example.com list news.shop.example.com manual][ann@example.com lists  spam]"
	if got := listed(); got != want {
		t.Fatalf("after five Adds:\n%s\nwant (address, scope, list order):\n%s", got, want)
	}
	del := func(scope postroom.Scope, list string, want bool) {
		t.Helper()
		had, err := l.Delete(t.Context(), a, "Ann@Example.com", scope, list)
		if err != nil || had != want {
			t.Errorf("Delete(%q, %q) = %v, %v; want %v, nil", scope, list, had, err, want)
		}
	}
	del(postroom.ScopeAll, "", true)
	del(postroom.ScopeAll, "", false)
	if _, rejected := rejects(a, "", addr); rejected {
		t.Error("transactional mail rejected after the all-mail entry's Delete")
	}
	if code, rejected := rejects(a, deals, addr); !rejected || code != postroom.ReasonSpam {
		t.Errorf("deals mail after the all-mail entry's Delete: %v %s; want rejected by the all-lists entry (spam)", rejected, code)
	}
	del(postroom.ScopeList, "<DEALS.shop.example.com>", true)
	del(postroom.ScopeList, deals, false)
	del(postroom.ScopeLists, "", true)
	if _, rejected := rejects(a, deals, addr); rejected {
		t.Error("deals mail rejected with only news's entry left")
	}
	if code, rejected := rejects(a, news, addr); !rejected || code != postroom.ReasonManual {
		t.Errorf("news mail: %v %s; want rejected (manual)", rejected, code)
	}
	if got, want := listed(), "[ann@example.com list news.shop.example.com manual]"; got != want {
		t.Errorf("left: %s; want %s", got, want)
	}
	// Without a scope: every entry of the address.
	mustAdd(t, l, suppression.Entry{AccountID: a, Address: addr, Scope: postroom.ScopeLists})
	mustAdd(t, l, suppression.Entry{AccountID: a, Address: "bob@example.com"})
	del("", "", true)
	del("", "", false)
	if got, want := listed(), "[bob@example.com all  manual]"; got != want {
		t.Errorf("after Delete without a scope: %s; want bob's entry alone", got)
	}
}

// testScopeListPages pages one entry at a time, and two, through
// addresses that have several scopes: each entry once, in (address,
// scope, list) order.
func testScopeListPages(t *testing.T, newList newList) {
	c := newClock()
	l := newList(t, suppression.Options{Now: c.Now})
	a := account(t, "a")
	// In List's order: (address, scope, list), bytewise.
	var want []suppression.Entry
	for _, addr := range []string{"a@example.com", "b@example.com", "c@example.com"} {
		for _, e := range []suppression.Entry{{Scope: postroom.ScopeAll}, {Scope: postroom.ScopeList, List: "a.example.com"}, {Scope: postroom.ScopeList, List: "b.example.com"}, {Scope: postroom.ScopeLists}} {
			if addr == "b@example.com" && e.Scope == postroom.ScopeList {
				continue // an address with two entries between those with four
			}
			e.AccountID, e.Address = a, addr
			want = append(want, e)
		}
	}
	for i := len(want) - 1; i >= 0; i-- { // added backwards
		mustAdd(t, l, want[i])
	}
	key := func(e suppression.Entry) string { return fmt.Sprintf("%s/%s/%s", e.Address, e.Scope, e.List) }
	var wantKeys []string
	for _, e := range want {
		wantKeys = append(wantKeys, key(e))
	}
	for _, limit := range []int{1, 2, 3, 100} {
		t.Run(fmt.Sprint("limit ", limit), func(t *testing.T) {
			var got []string
			cursor := ""
			for pages := 0; ; pages++ {
				if pages > len(want) {
					t.Fatal("more pages than entries")
				}
				page, next, err := l.List(t.Context(), suppression.Query{AccountID: a, Limit: limit, Cursor: cursor})
				if err != nil {
					t.Fatal(err)
				}
				if next != "" && len(page) != limit {
					t.Errorf("a page of %d with a next cursor; want %d", len(page), limit)
				}
				for _, e := range page {
					got = append(got, key(e))
				}
				if next == "" {
					break
				}
				cursor = next
			}
			if !slices.Equal(got, wantKeys) {
				t.Errorf("pages of %d:\n%q\nwant each once, in order:\n%q", limit, got, wantKeys)
			}
		})
	}
	// A cursor made before scopes, of an address alone, stands after
	// every entry of that address.
	page, _, err := l.List(t.Context(), suppression.Query{AccountID: a, Limit: 1, Cursor: base64.RawURLEncoding.EncodeToString([]byte("a@example.com"))})
	if err != nil || len(page) != 1 || key(page[0]) != "b@example.com/all/" {
		t.Errorf("List after an address-only cursor: %+v, %v; want b@example.com's first entry", page, err)
	}
}

// testScopeListFilters selects by scope and list, beside the other
// filters.
func testScopeListFilters(t *testing.T, newList newList) {
	c := newClock()
	l := newList(t, suppression.Options{Now: c.Now})
	a := account(t, "a")
	for _, e := range []suppression.Entry{
		{Address: "ann@example.com", Reason: postroom.ReasonHardBounce},
		{Address: "ann@example.com", Reason: postroom.ReasonUnsub, Scope: postroom.ScopeList, List: news},
		{Address: "bob@example.com", Reason: postroom.ReasonUnsub, Scope: postroom.ScopeList, List: deals},
		{Address: "bob@example.com", Reason: postroom.ReasonSpam, Scope: postroom.ScopeLists},
		{Address: "cy@example.com", Reason: postroom.ReasonUnsub, Scope: postroom.ScopeList, List: news},
	} {
		e.AccountID = a
		mustAdd(t, l, e)
	}
	for _, tt := range []struct {
		name string
		q    suppression.Query
		want string
	}{
		{"scope all", suppression.Query{Scope: postroom.ScopeAll}, "[ann@example.com all ]"},
		{"scope lists", suppression.Query{Scope: postroom.ScopeLists}, "[bob@example.com lists ]"},
		{"scope list", suppression.Query{Scope: postroom.ScopeList}, "[ann@example.com list news.shop.example.com bob@example.com list deals.shop.example.com cy@example.com list news.shop.example.com]"},
		{"a list", suppression.Query{List: "News.Shop.Example.com"}, "[ann@example.com list news.shop.example.com cy@example.com list news.shop.example.com]"},
		{"a list and scope list", suppression.Query{Scope: postroom.ScopeList, List: deals}, "[bob@example.com list deals.shop.example.com]"},
		{"a list and a reason", suppression.Query{List: news, Reason: postroom.ReasonSpam}, "[]"},
		{"a list and a prefix", suppression.Query{List: news, Prefix: "cy"}, "[cy@example.com list news.shop.example.com]"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.q.AccountID = a
			page, next, err := l.List(t.Context(), tt.q)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range page {
				got = append(got, e.Address, string(e.Scope), e.List)
			}
			if s := fmt.Sprint(got); s != tt.want || next != "" {
				t.Errorf("List = %s, next %q; want %s and no next page", s, next, tt.want)
			}
		})
	}
}

// testScopeLookup: Suppressed returns every active entry of every scope
// of the addresses asked, in its one lookup, with their scope and list;
// an expired entry of an address is left out, its active ones not.
func testScopeLookup(t *testing.T, newList newList) {
	c := newClock()
	l := newList(t, suppression.Options{Now: c.Now})
	a := account(t, "a")
	now := c.Now()
	mustAdd(t, l, suppression.Entry{AccountID: a, Address: "ann@example.com", Reason: postroom.ReasonSoftBounce, Expires: now.Add(time.Hour)})
	mustAdd(t, l, suppression.Entry{AccountID: a, Address: "ann@example.com", Reason: postroom.ReasonSpam, Scope: postroom.ScopeLists})
	mustAdd(t, l, suppression.Entry{AccountID: a, Address: "ann@example.com", Reason: postroom.ReasonUnsub, Scope: postroom.ScopeList, List: news, Detail: "list " + news})
	mustAdd(t, l, suppression.Entry{AccountID: a, Address: "bob@example.com", Reason: postroom.ReasonUnsub, Scope: postroom.ScopeList, List: deals})
	mustAdd(t, l, suppression.Entry{AccountID: account(t, "other"), Address: "ann@example.com", Scope: postroom.ScopeList, List: deals})
	lookup := func(at time.Time) []string {
		t.Helper()
		got, err := l.Suppressed(t.Context(), a, []string{"ANN@example.com", "bob@example.com", "cy@example.com"}, at)
		if err != nil {
			t.Fatal(err)
		}
		var s []string
		for _, e := range got {
			s = append(s, fmt.Sprintf("%s %s %s %s %s", e.Address, e.Scope, e.List, e.Reason, e.Detail))
		}
		slices.Sort(s)
		return s
	}
	want := []string{
		"ann@example.com all  soft-bounce ",
		"ann@example.com list news.shop.example.com unsub list news.shop.example.com",
		"ann@example.com lists  spam ",
		"bob@example.com list deals.shop.example.com unsub ",
	}
	if got := lookup(now); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Suppressed:\n%q\nwant\n%q", got, want)
	}
	if got := lookup(now.Add(time.Hour)); fmt.Sprint(got) != fmt.Sprint(want[1:]) {
		t.Errorf("Suppressed once the all-mail entry expired:\n%q\nwant\n%q", got, want[1:])
	}
}

// testScopePrecedence: an observation meets the entry of its own scope
// and list only. A permanent all-mail entry keeps a later hard bounce out,
// and does not keep a list unsubscribe out: that entry still holds when
// the bounce's is deleted.
func testScopePrecedence(t *testing.T, newList newList) {
	c := newClock()
	l := newList(t, suppression.Options{Now: c.Now})
	a := account(t, "a")
	rejects := rejecter(t, l, c)
	obs := func(o suppression.Observation) *suppression.Entry {
		t.Helper()
		o.AccountID, o.Address = a, "ann@example.com"
		e, err := l.Observe(t.Context(), o)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	if e := obs(suppression.Observation{Kind: suppression.HardBounce}); e == nil {
		t.Fatal("a first hard bounce listed nothing")
	}
	if e := obs(suppression.Observation{Kind: suppression.Complaint}); e != nil {
		t.Errorf("a complaint about a transactional message over a hard bounce: %+v; want nothing (all mail is silenced for good)", e)
	}
	e := obs(suppression.Observation{Kind: suppression.Unsubscribe, List: news, Status: "", Diagnostic: "one-click"})
	if e == nil || e.Scope != postroom.ScopeList || e.List != news || e.Detail != "one-click" {
		t.Fatalf("an unsubscribe from news over a hard bounce: %+v; want its own entry, of the list", e)
	}
	if e := obs(suppression.Observation{Kind: suppression.Unsubscribe, List: news}); e != nil {
		t.Errorf("a second unsubscribe from news: %+v; want nothing", e)
	}
	if had, err := l.Delete(t.Context(), a, "ann@example.com", postroom.ScopeAll, ""); err != nil || !had {
		t.Fatalf("Delete of the bounce: %v, %v", had, err)
	}
	if code, rejected := rejects(a, news, "ann@example.com"); !rejected || code != postroom.ReasonUnsub {
		t.Errorf("news after the bounce's Delete: %v %s; want rejected unsub", rejected, code)
	}
	for _, list := range []string{"", deals} {
		if _, rejected := rejects(a, list, "ann@example.com"); rejected {
			t.Errorf("mail of list %q rejected after the bounce's Delete; want sent", list)
		}
	}
}

// testScopeRefused: a scope or list that is not one is refused, naming
// its field, and nothing is listed.
func testScopeRefused(t *testing.T, newList newList) {
	c := newClock()
	l := newList(t, suppression.Options{Now: c.Now})
	a := account(t, "a")
	ctx := t.Context()
	field := func(name string, err error, want string) {
		t.Helper()
		var ve *postroom.ValidationError
		if !errors.As(err, &ve) || ve.Field != want {
			t.Errorf("%s: error %v; want a *postroom.ValidationError on %q", name, err, want)
		}
	}
	const addr = "ann@example.com"
	_, err := l.Add(ctx, suppression.Entry{AccountID: a, Address: addr, Scope: "everything"})
	field("Add of an unknown scope", err, "scope")
	_, err = l.Add(ctx, suppression.Entry{AccountID: a, Address: addr, Scope: postroom.ScopeList})
	field("Add of scope list without a list", err, "list")
	_, err = l.Add(ctx, suppression.Entry{AccountID: a, Address: addr, List: news})
	field("Add of a list without a scope", err, "list")
	_, err = l.Add(ctx, suppression.Entry{AccountID: a, Address: addr, Scope: postroom.ScopeLists, List: news})
	field("Add of a list with scope lists", err, "list")
	for _, bad := range []string{"news", ".news.example.com", "news..example.com", "news.example.com.", "new s.example.com", "news@example.com", "nëws.example.com", "a." + strings.Repeat("b", 254)} {
		_, err = l.Add(ctx, suppression.Entry{AccountID: a, Address: addr, Scope: postroom.ScopeList, List: bad})
		field(fmt.Sprintf("Add of list %q", bad), err, "list")
		_, err = l.Observe(ctx, suppression.Observation{AccountID: a, Address: addr, Kind: suppression.Unsubscribe, List: bad})
		field(fmt.Sprintf("Observe of list %q", bad), err, "list")
	}
	_, err = l.Observe(ctx, suppression.Observation{AccountID: a, Address: addr, Kind: suppression.Unsubscribe, Scope: "everything"})
	field("Observe of an unknown scope", err, "scope")
	_, err = l.Observe(ctx, suppression.Observation{AccountID: a, Address: addr, Kind: suppression.Unsubscribe, Scope: postroom.ScopeList})
	field("Observe of scope list without a list", err, "list")
	_, _, err = l.List(ctx, suppression.Query{AccountID: a, Scope: "everything"})
	field("List of an unknown scope", err, "scope")
	_, _, err = l.List(ctx, suppression.Query{AccountID: a, Scope: postroom.ScopeAll, List: news})
	field("List of a list with scope all", err, "list")
	_, _, err = l.List(ctx, suppression.Query{AccountID: a, List: "news"})
	field("List of a malformed list", err, "list")
	_, err = l.Delete(ctx, a, addr, "everything", "")
	field("Delete of an unknown scope", err, "scope")
	_, err = l.Delete(ctx, a, addr, "", news)
	field("Delete of a list without a scope", err, "list")
	_, err = l.Delete(ctx, a, addr, postroom.ScopeList, "")
	field("Delete of scope list without a list", err, "list")
	if page, _, err := l.List(ctx, suppression.Query{AccountID: a, IncludeExpired: true}); err != nil || len(page) != 0 {
		t.Errorf("after refused calls: %v, %v; want an empty list", page, err)
	}
}
