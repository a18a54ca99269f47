package unsubscribe_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/suppression"
	"github.com/postroom/postroom/unsubscribe"
)

// v1Vector is a version 1 token, made by the code before tokens named a
// list: Token("acct-1", "Ann@example.net") under oldKey at v1Made, with a
// TTL of a year.
const v1Vector = "k1.AQAAAABs65NQBmFjY3QtMUFubkBleGFtcGxlLm5ldA.FLIAui1StW5oYpmAUXZf2A"

var (
	v1Made    = time.Date(2026, 11, 28, 5, 0, 0, 0, time.UTC)
	v1Expires = v1Made.Add(365 * 24 * time.Hour)
)

// The MAC context strings of the two versions (see the package doc).
const (
	contextV1 = "postroom-unsubscribe-v1"
	contextV2 = "postroom-unsubscribe-v2"
)

// signRaw makes a token of payload under k with a MAC in context, as the
// package doc writes the format: the version 1 code's path, and tokens
// that only a key's holder could make.
func signRaw(k unsubscribe.Key, context string, payload []byte) string {
	p := base64.RawURLEncoding.EncodeToString(payload)
	h := hmac.New(sha256.New, k.Secret)
	h.Write([]byte(context + "\x00" + k.ID + "\x00" + p))
	return k.ID + "." + p + "." + base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:16])
}

// v1Payload is a version 1 payload: 1, expiry, len(account), account,
// address.
func v1Payload(account, address string, exp time.Time) []byte {
	p := binary.BigEndian.AppendUint64([]byte{1}, uint64(exp.Unix()))
	p = append(p, byte(len(account)))
	return append(append(p, account...), address...)
}

// v2Payload is a version 2 payload: 2, expiry, len(account), account,
// len(address), address, list.
func v2Payload(account, address, list string, exp time.Time) []byte {
	p := binary.BigEndian.AppendUint64([]byte{2}, uint64(exp.Unix()))
	p = append(p, byte(len(account)))
	p = append(p, account...)
	p = append(p, byte(len(address)))
	p = append(p, address...)
	return append(p, list...)
}

// newUnsubscriber is an Unsubscriber with keys and a clock at now, a TTL
// of a year.
func newUnsubscriber(t testing.TB, now time.Time, keys ...unsubscribe.Key) *unsubscribe.Unsubscriber {
	t.Helper()
	list, err := suppression.NewMemory(suppression.Options{})
	if err != nil {
		t.Fatal(err)
	}
	u, err := unsubscribe.New(unsubscribe.Options{Keys: keys, TTL: 365 * 24 * time.Hour, Suppressions: list, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// TestTokenRoundTrip: Token makes version 2 tokens, byte for byte the
// format the package doc states, and Verify returns what each names: a
// list message's token its list (lower-cased) and ScopeList, a
// transactional message's no list and ScopeAll.
func TestTokenRoundTrip(t *testing.T) {
	now := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	u := newUnsubscriber(t, now, oldKey)
	exp := now.Add(365 * 24 * time.Hour)
	for _, tc := range []struct {
		name, list, wantList string
		wantScope            postroom.Scope
	}{
		{"list", newsList, newsList, postroom.ScopeList},
		{"list in capitals", "News.Shop.Example.COM", newsList, postroom.ScopeList},
		{"list of odd atext", "a&b'c{d}|e.x/y=z?", "a&b'c{d}|e.x/y=z?", postroom.ScopeList},
		{"longest list", strings.Repeat("l", postroom.MaxListIDBytes-4) + ".com", strings.Repeat("l", postroom.MaxListIDBytes-4) + ".com", postroom.ScopeList},
		{"transactional", "", "", postroom.ScopeAll},
	} {
		t.Run(tc.name, func(t *testing.T) {
			acct, addr := strings.Repeat("a", 255), strings.Repeat("b", 240)+"@example.net"
			tok, err := u.Token(acct, addr, tc.list)
			if err != nil {
				t.Fatal(err)
			}
			if want := signRaw(oldKey, contextV2, v2Payload(acct, addr, tc.wantList, exp)); tok != want {
				t.Errorf("Token\n%s, want the documented format\n%s", tok, want)
			}
			s, err := u.Verify(tok)
			want := unsubscribe.Subscription{AccountID: acct, Address: addr, List: tc.wantList, Scope: tc.wantScope, Expires: exp}
			if err != nil || s != want {
				t.Errorf("Verify: %+v %v, want %+v", s, err, want)
			}
		})
	}
	for name, list := range map[string]string{
		"space":        "a b.example",
		"angle":        "<x>.example",
		"at":           "a@b.example",
		"non-ASCII":    "é.example",
		"control":      "a\nb.example",
		"too long":     strings.Repeat("l", postroom.MaxListIDBytes) + ".x",
		"double quote": `a"b.example`,
		"no dot":       "news",
		"leading dot":  ".news.example",
		"trailing dot": "news.example.",
		"empty label":  "news..example",
	} {
		t.Run("refuses "+name, func(t *testing.T) {
			if tok, err := u.Token("acct-1", "ann@example.net", list); err == nil {
				t.Errorf("Token(%q) = %s, want an error", list, tok)
			}
		})
	}
}

// TestTokenVersion1: a token made by the version 1 code still verifies,
// with the key that made it, as all lists (ScopeLists, no list), until it
// expires; signRaw is that code's path (it makes the vector again).
func TestTokenVersion1(t *testing.T) {
	if got := signRaw(oldKey, contextV1, v1Payload("acct-1", "Ann@example.net", v1Expires)); got != v1Vector {
		t.Fatalf("signRaw of version 1 = %s, not the version 1 code's %s", got, v1Vector)
	}
	u := newUnsubscriber(t, v1Expires.Add(-time.Second), newKey, oldKey)
	s, err := u.Verify(v1Vector)
	want := unsubscribe.Subscription{AccountID: "acct-1", Address: "Ann@example.net", Scope: postroom.ScopeLists, Expires: v1Expires}
	if err != nil || s != want {
		t.Errorf("Verify(version 1): %+v %v, want %+v", s, err, want)
	}
	u = newUnsubscriber(t, v1Expires, newKey, oldKey)
	if s, err := u.Verify(v1Vector); !errors.Is(err, unsubscribe.ErrExpiredToken) || s != want {
		t.Errorf("Verify(version 1) at its expiry: %+v %v, want ErrExpiredToken", s, err)
	}
	u = newUnsubscriber(t, v1Made, newKey)
	if _, err := u.Verify(v1Vector); !errors.Is(err, unsubscribe.ErrInvalidToken) {
		t.Errorf("Verify(version 1) without its key: %v, want ErrInvalidToken", err)
	}
}

// TestTokenNotConfused: no token is read with a meaning it was not made
// for: a version's payload under the other version's MAC context (what
// even the key's holder cannot get accepted), a version byte changed, a
// version that does not exist, and a list changed, added or dropped (a
// list's token made an all-mail one) are all invalid.
func TestTokenNotConfused(t *testing.T) {
	u := newUnsubscriber(t, v1Made, oldKey)
	exp := v1Expires
	listTok, _ := u.Token("acct-1", "ann@example.net", newsList)
	allTok, _ := u.Token("acct-1", "ann@example.net", "")
	swapPayload := func(tok string, payload []byte) string {
		id, rest, _ := strings.Cut(tok, ".")
		_, sig, _ := strings.Cut(rest, ".")
		return id + "." + base64.RawURLEncoding.EncodeToString(payload) + "." + sig
	}
	v1 := v1Payload("acct-1", "Ann@example.net", exp)
	v1as2 := append([]byte{2}, v1[1:]...)
	for name, tok := range map[string]string{
		"version 2 payload, version 1 MAC":  signRaw(oldKey, contextV1, v2Payload("acct-1", "ann@example.net", newsList, exp)),
		"version 1 payload, version 2 MAC":  signRaw(oldKey, contextV2, v1),
		"version 1 token, version byte 2":   swapPayload(v1Vector, v1as2),
		"version 3":                         signRaw(oldKey, contextV2, append([]byte{3}, v2Payload("acct-1", "ann@example.net", newsList, exp)[1:]...)),
		"version 0":                         signRaw(oldKey, contextV1, append([]byte{0}, v1[1:]...)),
		"list changed":                      swapPayload(listTok, v2Payload("acct-1", "ann@example.net", "other.shop.example.com", exp)),
		"list dropped":                      swapPayload(listTok, v2Payload("acct-1", "ann@example.net", "", exp)),
		"list added":                        swapPayload(allTok, v2Payload("acct-1", "ann@example.net", newsList, exp)),
		"address moved into the list":       swapPayload(listTok, v2Payload("acct-1", "ann@example.ne", "t"+newsList, exp)),
		"version 2 address length past end": signRaw(oldKey, contextV2, append(v2Payload("acct-1", "", "", exp)[:16], 200, 'a')),
		"version 2 without an address":      signRaw(oldKey, contextV2, v2Payload("acct-1", "", newsList, exp)),
		"version 1 without an account":      signRaw(oldKey, contextV1, v1Payload("", "ann@example.net", exp)),
		"version 2 without an address byte": signRaw(oldKey, contextV2, v2Payload("acct-1", "", "", exp)[:16]),
		"version 1 account length past end": signRaw(oldKey, contextV1, append(v1Payload("", "", exp)[:9], 50, 'a')),
	} {
		t.Run(name, func(t *testing.T) {
			if s, err := u.Verify(tok); !errors.Is(err, unsubscribe.ErrInvalidToken) {
				t.Errorf("Verify: %+v %v, want ErrInvalidToken", s, err)
			}
		})
	}
}

// FuzzVerify: no input panics, and a token that verifies is exactly one
// the key makes for what it names: Token's for a version 2 token, the
// version 1 code's for the version 1 vector (nothing else is accepted).
func FuzzVerify(f *testing.F) {
	u := newUnsubscriber(f, v1Made, oldKey)
	for _, list := range []string{newsList, ""} {
		tok, _ := u.Token("acct-1", "ann@example.net", list)
		f.Add(tok)
	}
	f.Add(v1Vector)
	f.Add("k1..")
	f.Add("k1.AQ.AA")
	f.Add("k1.Ag.AA")
	f.Fuzz(func(t *testing.T, token string) {
		s, err := u.Verify(token)
		if err != nil {
			return
		}
		if s.Scope == postroom.ScopeLists {
			if token != v1Vector {
				t.Errorf("Verify accepted %q as version 1 (%+v), which is not the version 1 vector", token, s)
			}
			return
		}
		if again, _ := u.Token(s.AccountID, s.Address, s.List); again != token {
			t.Errorf("Verify accepted %q, which is not the token of %+v: %q", token, s, again)
		}
	})
}
