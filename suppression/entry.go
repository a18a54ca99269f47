package suppression

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/accountid"
)

// List is a suppression list: what a Mailer consults
// (postroom.Suppressions) and what an application manages. Memory and
// SQL implement it; each is safe for concurrent use.
//
// Every method is scoped by account. Addresses are taken in any case and
// kept and compared lower-cased (see the package documentation). A
// malformed argument is refused with a *postroom.ValidationError naming
// its field ("account_id", "email", "reason", "send_id", "expires_at",
// "kind", "scope", "list", "cursor", "limit"); any other error is the
// store's (ctx's included), and leaves the list as it was.
//
// An entry's key is (account, address, scope, list): an address has at
// most one entry per scope (postroom.ScopeAll, ScopeLists, ScopeList)
// and, for ScopeList, per list. Suppressed returns the active entries of
// every scope of the addresses, in one lookup; the Mailer keeps those
// that cover the call's list (postroom.Suppression.Covers).
type List interface {
	postroom.Suppressions

	// Add lists e.Address in e.AccountID as given, replacing the
	// address's entry of the same scope and list, if any, and no other
	// (see Entry for the zero fields), and returns the entry as kept.
	Add(ctx context.Context, e Entry) (Entry, error)

	// Delete removes entries of the address, active or expired, and
	// reports whether there was one. An empty scope (and list) removes
	// every entry of the address, of every scope, and its count of soft
	// bounces; a scope removes the entry of that scope alone (with list,
	// the list id, for postroom.ScopeList; "" for the others), and
	// ScopeAll's the count of soft bounces too, since soft bounces list
	// all mail.
	Delete(ctx context.Context, accountID, address string, scope postroom.Scope, list string) (bool, error)

	// List returns the entries q selects, in (address, scope, list)
	// order (bytewise), at most q.Limit of them, and the cursor of the
	// next page: empty when there is none.
	List(ctx context.Context, q Query) ([]Entry, string, error)

	// Observe applies the list's Policy to one observation (a hard
	// bounce, a soft bounce, a complaint, an unsubscribe) and returns the
	// entry it listed, or nil when it listed nothing (a soft bounce below
	// the count, or an entry of the same scope and list already there for
	// good). Entries of other scopes do not matter: an unsubscribe from a
	// list is recorded even when a hard bounce silences all mail already,
	// so that it still holds when the bounce's entry is deleted.
	Observe(ctx context.Context, o Observation) (*Entry, error)
}

// Entry is one address of an account's list.
type Entry struct {
	// AccountID is the account: required, at most 255 bytes of UTF-8
	// without a control character (as every method takes it).
	AccountID string `json:"account_id"`
	// Address is the listed address, lower-cased.
	Address string `json:"email"`
	// Reason is why it is listed: postroom.ReasonHardBounce,
	// ReasonSoftBounce, ReasonSpam, ReasonUnsub or ReasonManual. Add
	// takes empty as ReasonManual.
	Reason postroom.ReasonCode `json:"reason"`
	// Detail says what listed it, for people: a bounce's status and
	// diagnostic, or a comment; at most 1024 bytes, on one line (Add and
	// Observe make it so). Empty: nothing to say.
	Detail string `json:"detail,omitempty"`
	// SendID is the send id of the message whose bounce or complaint
	// listed the address; empty when not known.
	SendID string `json:"send_id,omitempty"`
	// Created is when it was listed; Add takes zero as now.
	Created time.Time `json:"created_at"`
	// Expires is when it stops being listed; zero means never.
	Expires time.Time `json:"expires_at,omitzero"`
	// Scope is which of the address's mail the entry silences:
	// postroom.ScopeAll (every message), ScopeLists (every list message)
	// or ScopeList (the messages of List). Add takes empty as ScopeAll.
	// An address has at most one entry per scope and list.
	Scope postroom.Scope `json:"scope"`
	// List is the list id of a ScopeList entry (RFC 2919: label.namespace,
	// at most 255 octets, lower-cased); required with ScopeList, and empty
	// for the other scopes (Add refuses a list with them).
	List string `json:"list,omitempty"`
}

// Active reports whether e is listed at now: created at or before now,
// and not expired.
func (e *Entry) Active(now time.Time) bool {
	return !e.Created.After(now) && (e.Expires.IsZero() || e.Expires.After(now))
}

// suppression is e as a Mailer sees it.
func (e *Entry) suppression() postroom.Suppression {
	return postroom.Suppression{Address: e.Address, Reason: e.Reason, Detail: e.Detail, SendID: e.SendID, Created: e.Created, Expires: e.Expires, Scope: e.Scope, List: e.List}
}

// Kind is what an Observation heard back.
type Kind string

// Kinds of observation.
const (
	HardBounce  Kind = "hard-bounce" // the address is dead (bounce.Recipient.Hard)
	SoftBounce  Kind = "soft-bounce" // delivery failed, the address may be fine
	Complaint   Kind = "complaint"   // a spam complaint (ARF)
	Unsubscribe Kind = "unsubscribe" // the recipient unsubscribed
)

// reason is the reason code of an entry that k lists.
func (k Kind) reason() postroom.ReasonCode {
	switch k {
	case HardBounce:
		return postroom.ReasonHardBounce
	case SoftBounce:
		return postroom.ReasonSoftBounce
	case Complaint:
		return postroom.ReasonSpam
	case Unsubscribe:
		return postroom.ReasonUnsub
	}
	return ""
}

// Observation is one thing heard back about one address, for Observe.
type Observation struct {
	AccountID, Address string
	Kind               Kind
	// Status is the enhanced status code ("5.1.1"), Diagnostic the remote
	// server's text; both optional, and kept as the entry's Detail.
	Status, Diagnostic string
	// SendID is the send id of the message it is about, when known.
	SendID string
	// At is when it happened; zero means now (Options.Now).
	At time.Time
	// List is the list id of the message it is about (its List-Id,
	// lower-cased), "" for a transactional message.
	List string
	// Scope, when not empty, is the scope of the entry it lists, as the
	// unsubscribe page's choice says it; empty means the scope that Kind
	// and List give: a bounce silences all mail, a complaint all lists
	// (about a list message) or all mail (about a transactional one), an
	// unsubscribe the list (List) or, without a list, all lists.
	// ScopeList needs a List; with the other scopes List only goes into
	// the entry's detail. List is checked as Entry.List is.
	Scope postroom.Scope
}

// ObservationOf is the observation an Event of the sending path or of the
// receiving side is, for Observe: hard_bounce, soft_bounce, spam and unsub
// are; the others (send, deferral, reject) are not, and ok is false. The
// event's list (Event.List, the message's) is the observation's, so that
// a complaint about a list message lists all lists and an unsubscribe
// its list. Feed Options.OnEvent's events through it to list the
// addresses that the relay refused at SMTP time.
func ObservationOf(e postroom.Event) (o Observation, ok bool) {
	var k Kind
	switch e.Type {
	case postroom.EventHardBounce:
		k = HardBounce
	case postroom.EventSoftBounce:
		k = SoftBounce
	case postroom.EventSpam:
		k = Complaint
	case postroom.EventUnsub:
		k = Unsubscribe
	default:
		return Observation{}, false
	}
	return Observation{AccountID: e.AccountID, Address: e.Email, Kind: k, Status: e.Status, Diagnostic: e.Diagnostic, SendID: e.SendID, At: e.At, List: e.List}, true
}

// Query selects entries of one account for List.
type Query struct {
	// AccountID is the account; required.
	AccountID string
	// Reason, when not empty, selects the entries of that reason.
	Reason postroom.ReasonCode
	// Prefix, when not empty, selects the addresses that start with it
	// (compared lower-cased): a whole address selects that address.
	Prefix string
	// Scope, when not empty, selects the entries of that scope; List,
	// when not empty, the ScopeList entries of that list (with Scope
	// empty or ScopeList).
	Scope postroom.Scope
	List  string
	// IncludeExpired selects expired entries too; false selects the
	// entries active now.
	IncludeExpired bool
	// Limit is the most entries of a page. Zero means DefaultLimit; more
	// than MaxLimit is refused.
	Limit int
	// Cursor, from the previous page's List, asks for the page after it.
	// Empty means the first page.
	Cursor string
}

// Limits of a Query's page.
const (
	DefaultLimit = 100
	MaxLimit     = 1000
)

// Limits of an entry (an account id's: internal/accountid.MaxBytes).
const (
	maxAddress = 254 // RFC 5321 path, less the angle brackets
	maxDetail  = 1024
)

// invalid is the error of a refused argument.
func invalid(field, reason string) error {
	return &postroom.ValidationError{Field: field, Reason: reason}
}

// checkAccount checks an account id: not empty, and at most 255 bytes of
// UTF-8 without a control character (internal/accountid, the check the
// Mailer and httpapi make: PostgreSQL's text holds no NUL, and no account
// id has a line break).
func checkAccount(id string) error {
	if id == "" {
		return invalid("account_id", "empty")
	}
	if r := accountid.Check(id); r != "" {
		return invalid("account_id", r)
	}
	return nil
}

// normalAddress is address as the list keeps it, lower-cased, or the
// reason it cannot be listed: it must be ASCII, without space or control
// character, with a local part and a domain around its last @.
func normalAddress(address string) (string, error) {
	a := strings.TrimSpace(address)
	switch at := strings.LastIndexByte(a, '@'); {
	case a == "":
		return "", invalid("email", "empty")
	case len(a) > maxAddress:
		return "", invalid("email", fmt.Sprintf("longer than %d octets", maxAddress))
	case at <= 0 || at == len(a)-1:
		return "", invalid("email", "not an address: want local@domain")
	}
	for i := 0; i < len(a); i++ {
		if c := a[i]; c <= ' ' || c >= 0x7f {
			return "", invalid("email", "holds a space, a control character or non-ASCII: give an internationalized domain in its A-label (xn--) form")
		}
	}
	return strings.ToLower(a), nil
}

// lowerAll returns addresses lower-cased: addresses itself when they all
// are already.
func lowerAll(addresses []string) []string {
	for i, a := range addresses {
		if l := strings.ToLower(a); l != a {
			out := make([]string, len(addresses))
			copy(out, addresses[:i])
			for j := i; j < len(addresses); j++ {
				out[j] = strings.ToLower(addresses[j])
			}
			return out
		}
	}
	return addresses
}

// oneLine is s on one line (runs of white space and control characters
// made one space) of at most maxDetail bytes, cut between runes.
func oneLine(s string) string {
	s = strings.Join(strings.FieldsFunc(strings.ToValidUTF8(s, ""), func(r rune) bool {
		return r <= ' ' || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == '\u2028' || r == '\u2029'
	}), " ")
	if len(s) > maxDetail {
		i := maxDetail
		for i > 0 && !utf8.RuneStart(s[i]) {
			i--
		}
		s = strings.TrimRight(s[:i], " ")
	}
	return s
}

// checkEntry checks e for Add and returns it as kept: address and list
// lower-cased, reason, scope and created filled in, times to the
// microsecond (as PostgreSQL keeps them) in UTC.
func checkEntry(e Entry, now time.Time) (Entry, error) {
	if err := checkAccount(e.AccountID); err != nil {
		return Entry{}, err
	}
	addr, err := normalAddress(e.Address)
	if err != nil {
		return Entry{}, err
	}
	e.Address = addr
	if e.Scope, e.List, err = entryKey(e.Scope, e.List); err != nil {
		return Entry{}, err
	}
	if e.Reason == "" {
		e.Reason = postroom.ReasonManual
	}
	if !knownReason(e.Reason) {
		return Entry{}, invalid("reason", fmt.Sprintf("%q: want hard-bounce, soft-bounce, spam, unsub or manual", e.Reason))
	}
	e.Detail = oneLine(e.Detail)
	if len(e.SendID) > 64 {
		return Entry{}, invalid("send_id", "longer than 64 bytes")
	}
	if e.Created.IsZero() {
		e.Created = now
	}
	e.Created = stamp(e.Created)
	if !e.Expires.IsZero() {
		e.Expires = stamp(e.Expires)
		if !e.Expires.After(e.Created) {
			return Entry{}, invalid("expires_at", "not after created_at")
		}
	}
	return e, nil
}

// knownReason reports whether r is one of an entry's reasons.
func knownReason(r postroom.ReasonCode) bool {
	switch r {
	case postroom.ReasonHardBounce, postroom.ReasonSoftBounce, postroom.ReasonSpam, postroom.ReasonUnsub, postroom.ReasonManual:
		return true
	}
	return false
}

// stamp is t as the list keeps it: in UTC, to the microsecond.
func stamp(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

// checkObservation checks o for Observe: address and list lower-cased,
// At filled in and stamped.
func checkObservation(o Observation, now time.Time) (Observation, error) {
	if err := checkAccount(o.AccountID); err != nil {
		return Observation{}, err
	}
	addr, err := normalAddress(o.Address)
	if err != nil {
		return Observation{}, err
	}
	o.Address = addr
	if o.Kind.reason() == "" {
		return Observation{}, invalid("kind", fmt.Sprintf("%q: want hard-bounce, soft-bounce, complaint or unsubscribe", o.Kind))
	}
	if o, err = checkObservedKey(o); err != nil {
		return Observation{}, err
	}
	if len(o.SendID) > 64 {
		return Observation{}, invalid("send_id", "longer than 64 bytes")
	}
	if o.At.IsZero() {
		o.At = now
	}
	o.At = stamp(o.At)
	return o, nil
}

// detail is the Detail of the entry of scope o lists: the list of the
// message it is about, when it has one and scope does not name it
// already ("about list news.shop.example.com": a complaint that silences
// all lists), then its status and diagnostic, the status once.
func (o *Observation) detail(scope postroom.Scope) string {
	d := oneLine(o.Diagnostic)
	if o.Status != "" && !strings.Contains(d, o.Status) {
		d = strings.TrimSpace(oneLine(o.Status) + " " + d)
	}
	if o.List != "" && scope != postroom.ScopeList {
		if d != "" {
			d = ": " + d
		}
		d = "about list " + o.List + d
	}
	return oneLine(d)
}

// checkQuery checks q and returns it with its limit filled in, its prefix
// and list lower-cased (a list alone selecting ScopeList), and the key its
// cursor stands for (the zero key, before every entry, for the first
// page).
func checkQuery(q Query) (Query, key, error) {
	if err := checkAccount(q.AccountID); err != nil {
		return Query{}, key{}, err
	}
	switch {
	case q.Limit < 0:
		return Query{}, key{}, invalid("limit", "negative")
	case q.Limit > MaxLimit:
		return Query{}, key{}, invalid("limit", fmt.Sprintf("over %d", MaxLimit))
	case q.Limit == 0:
		q.Limit = DefaultLimit
	}
	if q.Reason != "" && !knownReason(q.Reason) {
		return Query{}, key{}, invalid("reason", fmt.Sprintf("%q: want hard-bounce, soft-bounce, spam, unsub, manual or none", q.Reason))
	}
	var err error
	if q.Scope, q.List, err = queryKey(q.Scope, q.List); err != nil {
		return Query{}, key{}, err
	}
	q.Prefix = strings.ToLower(strings.TrimSpace(q.Prefix))
	var after key
	if q.Cursor != "" {
		b, err := base64.RawURLEncoding.DecodeString(q.Cursor)
		var ok bool
		if err == nil {
			after, ok = cursorKey(string(b))
		}
		if !ok {
			return Query{}, key{}, invalid("cursor", "not a cursor List returned")
		}
	}
	return q, after, nil
}

// key is an entry's place in List's order: address, scope, list.
type key struct{ address, scope, list string }

// keyOf is e's key.
func keyOf(e *Entry) key { return key{e.Address, string(e.Scope), e.List} }

// after reports whether k comes after a in List's order (bytewise).
func (k key) after(a key) bool {
	if k.address != a.address {
		return k.address > a.address
	}
	if k.scope != a.scope {
		return k.scope > a.scope
	}
	return k.list > a.list
}

// cursorSep separates a cursor's parts: neither an address, a scope nor
// a list id holds it.
const cursorSep = "\x00"

// cursorAfter is the cursor of the page after the one that ends with e.
func cursorAfter(e *Entry) string {
	return base64.RawURLEncoding.EncodeToString([]byte(e.Address + cursorSep + string(e.Scope) + cursorSep + e.List))
}

// cursorKey is the key a cursor's text stands for, and whether it is
// one: an address, a scope and a list of printable ASCII (as every entry
// has; PostgreSQL's text would refuse a NUL or invalid UTF-8). A cursor
// of an address alone (as lists before scopes made them) stands after
// every entry of that address: DEL sorts after every scope.
func cursorKey(c string) (key, bool) {
	printable := func(s string) bool {
		for i := 0; i < len(s); i++ {
			if s[i] <= ' ' || s[i] >= 0x7f {
				return false
			}
		}
		return true
	}
	addr, rest, ok := strings.Cut(c, cursorSep)
	if !ok {
		return key{address: c, scope: "\x7f"}, c != "" && printable(c)
	}
	scope, list, _ := strings.Cut(rest, cursorSep)
	return key{addr, scope, list}, addr != "" && printable(addr) && printable(scope) && printable(list)
}

// replaces reports whether an observation's entry n replaces old, the
// address's entry of the same scope and list (nil: none), at the
// observation's time: an expired
// entry goes; one that never expires stays; an active one that expires
// gives way to one that never does.
func replaces(old *Entry, n *Entry, at time.Time) bool {
	switch {
	case old == nil, !old.Expires.IsZero() && !old.Expires.After(at):
		return true
	case old.Expires.IsZero():
		return false
	}
	return n.Expires.IsZero()
}
