package suppression_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/suppression"
)

// clock is a settable Options.Now.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 11, 20, 9, 30, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
	return c.t
}

// newList returns an empty list of the implementation under test, with
// opts, for the account names the test uses (a fresh store, or one
// shared by the tests whose account ids are their own).
type newList func(t *testing.T, opts suppression.Options) suppression.List

// contract is what every List does, run by runContract against Memory and
// SQL.
var contract = []struct {
	name string
	test func(t *testing.T, newList newList)
}{
	{"Lookup", testLookup},
	{"Expiry", testExpiry},
	{"AddReplacesDelete", testAddReplacesDelete},
	{"ListPages", testListPages},
	{"ListFilters", testListFilters},
	{"Refused", testRefused},
	{"PolicyHard", testPolicyHard},
	{"PolicySoft", testPolicySoft},
	{"PolicyPrecedence", testPolicyPrecedence},
	{"ConcurrentSoftBounces", testConcurrentSoftBounces},
	{"LargeBatch", testLargeBatch},
	{"Prune", testPrune},
}

func runContract(t *testing.T, newList newList) {
	for _, c := range append(contract, scopeContract...) {
		t.Run(c.name, func(t *testing.T) { c.test(t, newList) })
	}
}

// account is an account id of the test's own.
func account(t *testing.T, suffix string) string {
	return fmt.Sprintf("%s-%s", t.Name(), suffix)
}

func mustAdd(t *testing.T, l suppression.List, e suppression.Entry) suppression.Entry {
	t.Helper()
	got, err := l.Add(t.Context(), e)
	if err != nil {
		t.Fatalf("Add(%+v): %v", e, err)
	}
	return got
}

// suppressed is Suppressed's answer as address → reason, for addresses
// that have one entry each.
func suppressed(t *testing.T, l suppression.List, acct string, now time.Time, addrs ...string) map[string]postroom.ReasonCode {
	t.Helper()
	got, err := l.Suppressed(t.Context(), acct, addrs, now)
	if err != nil {
		t.Fatalf("Suppressed: %v", err)
	}
	m := map[string]postroom.ReasonCode{}
	for _, s := range got {
		if _, dup := m[s.Address]; dup {
			t.Errorf("Suppressed returned %s twice", s.Address)
		}
		m[s.Address] = s.Reason
	}
	return m
}

func testLookup(t *testing.T, newList newList) {
	c := newClock()
	l := newList(t, suppression.Options{Now: c.Now})
	a, b := account(t, "a"), account(t, "b")
	e := mustAdd(t, l, suppression.Entry{AccountID: a, Address: " Ann@Example.COM ", Reason: postroom.ReasonHardBounce, Detail: "550 5.1.1\r\nuser unknown", SendID: "0123456789abcdef0123456789abcdef"})
	if e.Address != "ann@example.com" || e.Detail != "550 5.1.1 user unknown" || !e.Created.Equal(c.Now()) || !e.Expires.IsZero() {
		t.Errorf("Add kept %+v; want the address lower-cased, the detail on one line, created now, no expiry", e)
	}
	mustAdd(t, l, suppression.Entry{AccountID: a, Address: "bob@example.com", Reason: postroom.ReasonUnsub})
	mustAdd(t, l, suppression.Entry{AccountID: b, Address: "carl@example.com"})

	got, err := l.Suppressed(t.Context(), a, []string{"ann@example.com", "nobody@example.com", "BOB@example.com", "carl@example.com"}, c.Now())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]postroom.Suppression{
		"ann@example.com": {Address: "ann@example.com", Reason: postroom.ReasonHardBounce, Detail: "550 5.1.1 user unknown", SendID: "0123456789abcdef0123456789abcdef", Created: c.Now()},
		"bob@example.com": {Address: "bob@example.com", Reason: postroom.ReasonUnsub, Created: c.Now()},
	}
	if len(got) != len(want) {
		t.Fatalf("Suppressed = %+v; want %d entries (ann, bob; carl is another account's)", got, len(want))
	}
	for _, s := range got {
		w, ok := want[s.Address]
		if !ok || s.Reason != w.Reason || s.Detail != w.Detail || s.SendID != w.SendID || !s.Created.Equal(w.Created) || !s.Expires.IsZero() {
			t.Errorf("Suppressed gave %+v; want %+v", s, w)
		}
	}
	if m := suppressed(t, l, "unknown-account", c.Now(), "ann@example.com"); len(m) != 0 {
		t.Errorf("an unknown account: Suppressed = %v; want none", m)
	}
	if m := suppressed(t, l, a, c.Now()); len(m) != 0 {
		t.Errorf("no addresses: Suppressed = %v; want none", m)
	}
	// Manual is the default reason.
	if m := suppressed(t, l, b, c.Now(), "carl@example.com"); m["carl@example.com"] != postroom.ReasonManual {
		t.Errorf("an entry added without a reason: %v; want manual", m)
	}
}

func testExpiry(t *testing.T, newList newList) {
	c := newClock()
	l := newList(t, suppression.Options{Now: c.Now})
	a := account(t, "a")
	now := c.Now()
	mustAdd(t, l, suppression.Entry{AccountID: a, Address: "soon@example.com", Reason: postroom.ReasonSoftBounce, Expires: now.Add(time.Hour)})
	mustAdd(t, l, suppression.Entry{AccountID: a, Address: "later@example.com", Created: now.Add(time.Hour)})
	for _, tt := range []struct {
		at   time.Time
		want []string
	}{
		{now, []string{"soon@example.com"}},
		{now.Add(time.Hour - time.Microsecond), []string{"soon@example.com"}},
		{now.Add(time.Hour), []string{"later@example.com"}}, // expired at its Expires, active from its Created
	} {
		m := suppressed(t, l, a, tt.at, "soon@example.com", "later@example.com")
		if len(m) != len(tt.want) {
			t.Errorf("at %v: Suppressed = %v; want %v", tt.at, m, tt.want)
			continue
		}
		for _, w := range tt.want {
			if _, ok := m[w]; !ok {
				t.Errorf("at %v: Suppressed = %v; want %v", tt.at, m, tt.want)
			}
		}
	}
}

func testAddReplacesDelete(t *testing.T, newList newList) {
	c := newClock()
	l := newList(t, suppression.Options{Now: c.Now})
	a := account(t, "a")
	mustAdd(t, l, suppression.Entry{AccountID: a, Address: "ann@example.com", Reason: postroom.ReasonHardBounce})
	mustAdd(t, l, suppression.Entry{AccountID: a, Address: "ANN@example.com", Reason: postroom.ReasonManual, Detail: "by hand"})
	page, _, err := l.List(t.Context(), suppression.Query{AccountID: a, IncludeExpired: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(page) != 1 || page[0].Reason != postroom.ReasonManual || page[0].Detail != "by hand" {
		t.Fatalf("after two Adds of one address: %+v; want the second alone", page)
	}
	for i, want := range []bool{true, false} {
		had, err := l.Delete(t.Context(), a, "Ann@Example.com", "", "")
		if err != nil || had != want {
			t.Errorf("Delete #%d = %v, %v; want %v, nil", i+1, had, err, want)
		}
	}
	if m := suppressed(t, l, a, c.Now(), "ann@example.com"); len(m) != 0 {
		t.Errorf("after Delete: Suppressed = %v; want none", m)
	}
}

func testListPages(t *testing.T, newList newList) {
	c := newClock()
	l := newList(t, suppression.Options{Now: c.Now})
	a := account(t, "a")
	const n = 250
	for i := range n {
		mustAdd(t, l, suppression.Entry{AccountID: a, Address: fmt.Sprintf("u%03d@example.com", (i*37)%n)})
	}
	mustAdd(t, l, suppression.Entry{AccountID: account(t, "other"), Address: "u000@example.com"})
	var all []string
	cursor := ""
	for pages := 0; ; pages++ {
		if pages > 3 {
			t.Fatal("more than 3 pages of 100 for 250 entries")
		}
		page, next, err := l.List(t.Context(), suppression.Query{AccountID: a, Limit: 100, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		if next != "" && len(page) != 100 {
			t.Errorf("a page of %d with a next cursor; want 100", len(page))
		}
		for _, e := range page {
			all = append(all, e.Address)
		}
		if next == "" {
			break
		}
		cursor = next
	}
	if len(all) != n {
		t.Fatalf("listed %d entries; want %d", len(all), n)
	}
	for i, addr := range all {
		if want := fmt.Sprintf("u%03d@example.com", i); addr != want {
			t.Fatalf("entry %d is %s; want %s (address order, each once)", i, addr, want)
		}
	}
	// The default limit.
	page, next, err := l.List(t.Context(), suppression.Query{AccountID: a})
	if err != nil || len(page) != suppression.DefaultLimit || next == "" {
		t.Errorf("List without a limit: %d entries, next %q, %v; want %d and a cursor", len(page), next, err, suppression.DefaultLimit)
	}
}

func testListFilters(t *testing.T, newList newList) {
	c := newClock()
	l := newList(t, suppression.Options{Now: c.Now})
	a := account(t, "a")
	now := c.Now()
	for _, e := range []suppression.Entry{
		{Address: "ann@example.com", Reason: postroom.ReasonHardBounce},
		{Address: "anna@example.org", Reason: postroom.ReasonSpam},
		{Address: "annie@example.net", Reason: postroom.ReasonSoftBounce, Created: now.Add(-48 * time.Hour), Expires: now.Add(-24 * time.Hour)},
		{Address: "bob@example.com", Reason: postroom.ReasonHardBounce},
		{Address: "an_n%@example.com", Reason: postroom.ReasonManual},
	} {
		e.AccountID = a
		mustAdd(t, l, e)
	}
	for _, tt := range []struct {
		name string
		q    suppression.Query
		want []string
	}{
		{"all active", suppression.Query{}, []string{"an_n%@example.com", "ann@example.com", "anna@example.org", "bob@example.com"}},
		{"with expired", suppression.Query{IncludeExpired: true}, []string{"an_n%@example.com", "ann@example.com", "anna@example.org", "annie@example.net", "bob@example.com"}},
		{"prefix", suppression.Query{Prefix: "ANN"}, []string{"ann@example.com", "anna@example.org"}},
		{"prefix is literal", suppression.Query{Prefix: "an_n%"}, []string{"an_n%@example.com"}},
		{"whole address", suppression.Query{Prefix: "ann@example.com"}, []string{"ann@example.com"}},
		{"reason", suppression.Query{Reason: postroom.ReasonHardBounce}, []string{"ann@example.com", "bob@example.com"}},
		{"reason and prefix with expired", suppression.Query{Reason: postroom.ReasonSoftBounce, Prefix: "ann", IncludeExpired: true}, []string{"annie@example.net"}},
		{"none", suppression.Query{Prefix: "zed"}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.q.AccountID = a
			page, next, err := l.List(t.Context(), tt.q)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range page {
				got = append(got, e.Address)
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) || next != "" {
				t.Errorf("List = %v, next %q; want %v and no next page", got, next, tt.want)
			}
		})
	}
}

func testRefused(t *testing.T, newList newList) {
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
	_, err := l.Add(ctx, suppression.Entry{AccountID: "", Address: "ann@example.com"})
	field("Add without account", err, "account_id")
	// An account PostgreSQL's text cannot hold (a NUL, invalid UTF-8),
	// or that no application has (a control character), is refused as
	// such, not as the store's error.
	for _, bad := range []string{"a\x00b", "a\nb", "a\xffb"} {
		_, err = l.Add(ctx, suppression.Entry{AccountID: bad, Address: "ann@example.com"})
		field(fmt.Sprintf("Add for account %q", bad), err, "account_id")
		_, err = l.Observe(ctx, suppression.Observation{AccountID: bad, Address: "ann@example.com", Kind: suppression.HardBounce})
		field(fmt.Sprintf("Observe for account %q", bad), err, "account_id")
		_, _, err = l.List(ctx, suppression.Query{AccountID: bad})
		field(fmt.Sprintf("List of account %q", bad), err, "account_id")
		_, err = l.Delete(ctx, bad, "ann@example.com", "", "")
		field(fmt.Sprintf("Delete in account %q", bad), err, "account_id")
	}
	for _, bad := range []string{"", "no-at", "@example.com", "ann@", "ann @example.com", "ann@bücher.example"} {
		_, err = l.Add(ctx, suppression.Entry{AccountID: a, Address: bad})
		field(fmt.Sprintf("Add(%q)", bad), err, "email")
	}
	_, err = l.Add(ctx, suppression.Entry{AccountID: a, Address: "ann@example.com", Reason: "bounced"})
	field("Add with an unknown reason", err, "reason")
	_, err = l.Add(ctx, suppression.Entry{AccountID: a, Address: "ann@example.com", Created: c.Now(), Expires: c.Now()})
	field("Add expiring when created", err, "expires_at")
	_, err = l.Observe(ctx, suppression.Observation{AccountID: a, Address: "ann@example.com", Kind: "bounced"})
	field("Observe of an unknown kind", err, "kind")
	_, _, err = l.List(ctx, suppression.Query{AccountID: a, Cursor: "!!"})
	field("List with a bad cursor", err, "cursor")
	// Cursors that decode to what no entry holds (a NUL past the key's
	// parts, invalid UTF-8) are refused as such, not as the store's error.
	for _, raw := range []string{"a@b\x00all\x00x\x00y", "a@b\x00all\x00\xff", "\xff@b", "\x00all\x00"} {
		_, _, err = l.List(ctx, suppression.Query{AccountID: a, Cursor: base64.RawURLEncoding.EncodeToString([]byte(raw))})
		field(fmt.Sprintf("List with cursor %q", raw), err, "cursor")
	}
	_, _, err = l.List(ctx, suppression.Query{AccountID: a, Reason: "bounced"})
	field("List of an unknown reason", err, "reason")
	_, _, err = l.List(ctx, suppression.Query{AccountID: a, Limit: suppression.MaxLimit + 1})
	field("List over the limit", err, "limit")
	_, err = l.Delete(ctx, a, "nope", "", "")
	field("Delete of no address", err, "email")
	if page, _, err := l.List(ctx, suppression.Query{AccountID: a, IncludeExpired: true}); err != nil || len(page) != 0 {
		t.Errorf("after refused calls: %v, %v; want an empty list", page, err)
	}
}

func testPolicyHard(t *testing.T, newList newList) {
	c := newClock()
	l := newList(t, suppression.Options{Now: c.Now})
	a := account(t, "a")
	for _, tt := range []struct {
		kind suppression.Kind
		want postroom.ReasonCode
	}{
		{suppression.HardBounce, postroom.ReasonHardBounce},
		{suppression.Complaint, postroom.ReasonSpam},
		{suppression.Unsubscribe, postroom.ReasonUnsub},
	} {
		addr := string(tt.kind) + "@example.com"
		e, err := l.Observe(t.Context(), suppression.Observation{AccountID: a, Address: addr, Kind: tt.kind, Status: "5.1.1", Diagnostic: "smtp; 550 5.1.1 user unknown", SendID: "ab"})
		if err != nil {
			t.Fatal(err)
		}
		if e == nil || e.Reason != tt.want || !e.Expires.IsZero() || !e.Created.Equal(c.Now()) || e.Detail != "smtp; 550 5.1.1 user unknown" || e.SendID != "ab" {
			t.Errorf("Observe(%s) = %+v; want an entry %s, now, never expiring, with the diagnostic", tt.kind, e, tt.want)
		}
		if m := suppressed(t, l, a, c.Now().Add(10*365*24*time.Hour), addr); m[addr] != tt.want {
			t.Errorf("ten years after %s: %v; want still %s", tt.kind, m, tt.want)
		}
	}
	// A status the diagnostic does not show is put before it.
	e, err := l.Observe(t.Context(), suppression.Observation{AccountID: a, Address: "x@example.com", Kind: suppression.HardBounce, Status: "5.1.1", Diagnostic: "user unknown"})
	if err != nil || e == nil || e.Detail != "5.1.1 user unknown" {
		t.Errorf("Observe = %+v, %v; want detail %q", e, err, "5.1.1 user unknown")
	}
}

func testPolicySoft(t *testing.T, newList newList) {
	c := newClock()
	l := newList(t, suppression.Options{Now: c.Now})
	a := account(t, "a")
	addr := "full@example.com"
	soft := func(at time.Time) *suppression.Entry {
		t.Helper()
		e, err := l.Observe(t.Context(), suppression.Observation{AccountID: a, Address: addr, Kind: suppression.SoftBounce, Status: "4.2.2", Diagnostic: "mailbox full", At: at})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	start := c.Now()
	day := 24 * time.Hour
	// Two within the window, then the first leaves it: no listing.
	if soft(start) != nil || soft(start.Add(3*day)) != nil {
		t.Fatal("listed before the third soft bounce")
	}
	if e := soft(start.Add(7 * day)); e != nil {
		t.Fatalf("listed at the third soft bounce over more than the window (the first is 7 days old): %+v", e)
	}
	// The second, the third and now a fourth are within 7 days.
	fourth := start.Add(8 * day)
	e := soft(fourth)
	if e == nil || e.Reason != postroom.ReasonSoftBounce || !e.Created.Equal(fourth) || !e.Expires.Equal(fourth.Add(suppression.DefaultSoftExpiry)) || e.Detail != "4.2.2 mailbox full" {
		t.Fatalf("third soft bounce within the window: %+v; want listed soft-bounce from then for 7 days", e)
	}
	if m := suppressed(t, l, a, fourth.Add(7*day-time.Second), addr); m[addr] != postroom.ReasonSoftBounce {
		t.Errorf("just before expiry: %v; want listed", m)
	}
	if m := suppressed(t, l, a, fourth.Add(7*day), addr); len(m) != 0 {
		t.Errorf("at expiry: %v; want not listed", m)
	}
	// The count starts over after a listing.
	after := fourth.Add(7 * day)
	if soft(after) != nil || soft(after.Add(time.Hour)) != nil {
		t.Fatal("listed again before three new soft bounces")
	}
	if e := soft(after.Add(2 * time.Hour)); e == nil || !e.Expires.Equal(after.Add(2*time.Hour+suppression.DefaultSoftExpiry)) {
		t.Errorf("three new soft bounces after expiry: %+v; want listed again", e)
	}

	// A policy of its own.
	l2 := newList(t, suppression.Options{Now: c.Now, Policy: suppression.Policy{SoftBounces: 1, SoftExpiry: time.Hour}})
	e, err := l2.Observe(t.Context(), suppression.Observation{AccountID: account(t, "b"), Address: addr, Kind: suppression.SoftBounce})
	if err != nil || e == nil || !e.Created.Equal(c.Now()) || !e.Expires.Equal(c.Now().Add(time.Hour)) {
		t.Errorf("SoftBounces 1, SoftExpiry 1h, At zero: %+v, %v; want listed now for an hour", e, err)
	}
}

func testPolicyPrecedence(t *testing.T, newList newList) {
	c := newClock()
	l := newList(t, suppression.Options{Now: c.Now, Policy: suppression.Policy{SoftBounces: 1}})
	a := account(t, "a")
	obs := func(addr string, k suppression.Kind) *suppression.Entry {
		t.Helper()
		e, err := l.Observe(t.Context(), suppression.Observation{AccountID: a, Address: addr, Kind: k})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	reason := func(addr string) postroom.ReasonCode {
		return suppressed(t, l, a, c.Now(), addr)[addr]
	}
	// A permanent entry stays: the first cause (of its scope: a
	// complaint about a transactional message and a bounce both silence
	// all mail; testScopePrecedence has the others).
	obs("p@example.com", suppression.Complaint)
	if e := obs("p@example.com", suppression.HardBounce); e != nil || reason("p@example.com") != postroom.ReasonSpam {
		t.Errorf("a hard bounce after a complaint: %+v, %s; want nothing listed, spam kept", e, reason("p@example.com"))
	}
	if e := obs("p@example.com", suppression.SoftBounce); e != nil || reason("p@example.com") != postroom.ReasonSpam {
		t.Errorf("a soft bounce after a complaint: %+v; want nothing listed", e)
	}
	// An expiring entry gives way to a permanent one, not to another
	// expiring one.
	obs("s@example.com", suppression.SoftBounce)
	if e := obs("s@example.com", suppression.SoftBounce); e != nil {
		t.Errorf("a soft bounce over an active soft-bounce entry: %+v; want nothing listed", e)
	}
	if e := obs("s@example.com", suppression.Complaint); e == nil || reason("s@example.com") != postroom.ReasonSpam {
		t.Errorf("a complaint over a soft-bounce entry: %+v; want spam listed", e)
	}
	// A manual entry is permanent too, unless it was given an expiry.
	mustAdd(t, l, suppression.Entry{AccountID: a, Address: "m@example.com", Expires: c.Now().Add(time.Hour)})
	if e := obs("m@example.com", suppression.HardBounce); e == nil || reason("m@example.com") != postroom.ReasonHardBounce {
		t.Errorf("a hard bounce over an expiring manual entry: %+v; want hard-bounce listed", e)
	}
	// An expired entry gives way to anything.
	mustAdd(t, l, suppression.Entry{AccountID: a, Address: "x@example.com", Reason: postroom.ReasonSoftBounce, Created: c.Now().Add(-2 * time.Hour), Expires: c.Now().Add(-time.Hour)})
	if e := obs("x@example.com", suppression.SoftBounce); e == nil || reason("x@example.com") != postroom.ReasonSoftBounce {
		t.Errorf("a soft bounce over an expired entry: %+v; want listed", e)
	}
}

// testConcurrentSoftBounces observes 12 soft bounces of one address at
// once, with a policy of 3: whatever the interleaving, exactly one of
// them lists it (the others count towards a listing that an active entry
// then keeps out, or fall short), and the list ends with one entry.
func testConcurrentSoftBounces(t *testing.T, newList newList) {
	c := newClock()
	l := newList(t, suppression.Options{Now: c.Now})
	a := account(t, "a")
	var wg sync.WaitGroup
	var mu sync.Mutex
	listed := 0
	for i := range 12 {
		wg.Go(func() {
			e, err := l.Observe(t.Context(), suppression.Observation{AccountID: a, Address: "busy@example.com", Kind: suppression.SoftBounce, At: c.Now().Add(time.Duration(i) * time.Millisecond)})
			if err != nil {
				t.Error(err)
				return
			}
			if e != nil {
				mu.Lock()
				listed++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if listed != 1 {
		t.Errorf("%d observations listed the address; want exactly 1", listed)
	}
	page, _, err := l.List(t.Context(), suppression.Query{AccountID: a, IncludeExpired: true})
	if err != nil || len(page) != 1 {
		t.Errorf("List = %+v, %v; want one entry", page, err)
	}
}

// testLargeBatch looks up 25,000 addresses, every tenth listed, in one
// call.
func testLargeBatch(t *testing.T, newList newList) {
	if testing.Short() {
		t.Skip("25,000 entries")
	}
	c := newClock()
	l := newList(t, suppression.Options{Now: c.Now})
	a := account(t, "a")
	addrs := make([]string, 25000)
	for i := range addrs {
		addrs[i] = fmt.Sprintf("user%05d@example.com", i)
	}
	if err := addMany(t, l, a, addrs, 10); err != nil {
		t.Fatal(err)
	}
	m := suppressed(t, l, a, c.Now(), addrs...)
	if len(m) != 2500 {
		t.Fatalf("Suppressed found %d of 25,000; want 2,500", len(m))
	}
	for i := 0; i < len(addrs); i += 10 {
		if _, ok := m[addrs[i]]; !ok {
			t.Fatalf("%s is listed and was not found", addrs[i])
		}
	}
}

// addMany adds every step-th address of addrs to account.
func addMany(t *testing.T, l suppression.List, account string, addrs []string, step int) error {
	for i := 0; i < len(addrs); i += step {
		if _, err := l.Add(t.Context(), suppression.Entry{AccountID: account, Address: addrs[i], Reason: postroom.ReasonHardBounce}); err != nil {
			return err
		}
	}
	return nil
}

// pruner is what Memory and SQL have beside List.
type pruner interface {
	Prune(ctx context.Context, before time.Time) (int, error)
}

// testPrune: Prune deletes the expired entries alone, and the soft
// bounces too old to count, so that a soft bounce after it starts a new
// count.
func testPrune(t *testing.T, newList newList) {
	c := newClock()
	l := newList(t, suppression.Options{Now: c.Now})
	p, ok := l.(pruner)
	if !ok {
		t.Fatalf("%T has no Prune", l)
	}
	a := account(t, "a")
	now := c.Now()
	mustAdd(t, l, suppression.Entry{AccountID: a, Address: "old@example.com", Reason: postroom.ReasonSoftBounce, Created: now.Add(-48 * time.Hour), Expires: now.Add(-time.Hour)})
	mustAdd(t, l, suppression.Entry{AccountID: a, Address: "live@example.com", Reason: postroom.ReasonSoftBounce, Expires: now.Add(time.Hour)})
	mustAdd(t, l, suppression.Entry{AccountID: a, Address: "forever@example.com", Reason: postroom.ReasonHardBounce})
	soft := func(addr string, at time.Time) *suppression.Entry {
		t.Helper()
		e, err := l.Observe(t.Context(), suppression.Observation{AccountID: a, Address: addr, Kind: suppression.SoftBounce, At: at})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	// Two soft bounces 8 days ago (too old to count at now) and two 1 day
	// ago (still counting).
	soft("stale@example.com", now.Add(-8*24*time.Hour))
	soft("stale@example.com", now.Add(-8*24*time.Hour+time.Minute))
	soft("recent@example.com", now.Add(-24*time.Hour))
	soft("recent@example.com", now.Add(-24*time.Hour+time.Minute))

	// Prune spans every account: other cases' expired entries may count.
	n, err := p.Prune(t.Context(), now)
	if err != nil || n < 1 {
		t.Fatalf("Prune = %d, %v; want at least 1 (this account's expired entry)", n, err)
	}
	page, _, err := l.List(t.Context(), suppression.Query{AccountID: a, IncludeExpired: true})
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, e := range page {
		left = append(left, e.Address)
	}
	if fmt.Sprint(left) != "[forever@example.com live@example.com]" {
		t.Errorf("after Prune: %v; want forever@ and live@", left)
	}
	// The recent bounces still count: a third lists; the stale ones were
	// pruned (and would not count anyway): a third is the first of a new
	// count.
	if e := soft("recent@example.com", now); e == nil {
		t.Error("a third soft bounce within the window after Prune: not listed; want listed")
	}
	if e := soft("stale@example.com", now); e != nil {
		t.Errorf("a soft bounce after Prune dropped the stale ones: %+v; want not listed", e)
	}
}
