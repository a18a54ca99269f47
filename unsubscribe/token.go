package unsubscribe

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/postroom/postroom"
)

// Key is one signing key: ID names it in the tokens it signs (1 to 16
// characters of A-Z a-z 0-9 - _), Secret is at least 32 random bytes.
type Key struct {
	ID     string
	Secret []byte
}

// MinSecretBytes is the shortest Key.Secret.
const MinSecretBytes = 32

// Token errors, for errors.Is.
var (
	// ErrInvalidToken: the token is malformed, altered, or names a key
	// that Options.Keys does not hold.
	ErrInvalidToken = errors.New("unsubscribe: invalid token")
	// ErrExpiredToken: the token was valid but is older than its expiry.
	ErrExpiredToken = errors.New("unsubscribe: expired token")
)

// Subscription is what a valid token names: whose mail, of which list,
// and what its one-click POST unsubscribes from.
type Subscription struct {
	// AccountID is the account whose mail it is.
	AccountID string
	// Address is the recipient's address, as the token was made for it.
	Address string
	// List is the list id (lower-cased) of the message the token was
	// made for; empty for a transactional message's token (under
	// postroom.Options.UnsubscribeAllMail) and for a token of version 1,
	// made before tokens named a list.
	List string
	// Scope is what the one-click POST (RFC 8058) unsubscribes the
	// address from: postroom.ScopeList (List alone) for a list message's
	// token, postroom.ScopeAll (all of the account's mail) for a
	// transactional message's, postroom.ScopeLists (every list of the
	// account) for a token of version 1.
	Scope postroom.Scope
	// Expires is when the token stops being honoured, in UTC, to the
	// second.
	Expires time.Time
}

// Token versions: the first byte of a token's payload, each with its own
// MAC context string (tokenContext), so that no token of one version can
// be read as one of another.
const (
	// version1 tokens (account, address) were made before tokens named a
	// list; they are verified, never made.
	version1 = 1
	// version2 tokens sign (account, address, list).
	version2 = 2
)

// tokenContext is the context string of a version's MACs: it separates
// this package's MACs from any other use of the keys, and each version's
// from the others'.
func tokenContext(version byte) string {
	if version == version1 {
		return "postroom-unsubscribe-v1"
	}
	return "postroom-unsubscribe-v2"
}

// b64 is strict: a token has one spelling (no stray trailing bits).
var b64 = base64.RawURLEncoding.Strict()

// maxTokenBytes bounds the token verify reads: a version 2 token of the
// longest key id, account id, address and list id is about 1,080 bytes.
const maxTokenBytes = 2048

// checkKey checks one key.
func checkKey(k Key) error {
	if k.ID == "" || len(k.ID) > 16 {
		return fmt.Errorf("ID %q is not 1 to 16 characters", k.ID)
	}
	for _, c := range k.ID {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return fmt.Errorf("ID %q has a character other than A-Z a-z 0-9 - _", k.ID)
		}
	}
	if len(k.Secret) < MinSecretBytes {
		return fmt.Errorf("key %q: Secret has %d bytes, fewer than %d", k.ID, len(k.Secret), MinSecretBytes)
	}
	return nil
}

// checkList returns list lower-cased, or why it is not a list id as a
// List-Id header gives it (RFC 2919): a dot-atom with at least one dot, of
// at most postroom.MaxListIDBytes. Empty is no list.
func checkList(list string) (string, error) {
	if list == "" {
		return "", nil
	}
	if len(list) > postroom.MaxListIDBytes {
		return "", fmt.Errorf("list id of %d bytes, at most %d", len(list), postroom.MaxListIDBytes)
	}
	if !strings.Contains(list, ".") || strings.HasPrefix(list, ".") || strings.HasSuffix(list, ".") || strings.Contains(list, "..") {
		return "", fmt.Errorf("list id %q is not labels joined by single dots (RFC 2919)", list)
	}
	for i := 0; i < len(list); i++ {
		c := list[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),:;<>@[\]`, c) >= 0 {
			return "", fmt.Errorf("list id %q holds %q, not a dot-atom character (RFC 2919)", list, c)
		}
	}
	return strings.ToLower(list), nil
}

// sign makes the version 2 token of s (its account, address, list and
// expiry) under k. The payload is
//
//	2, expiry (8 bytes, Unix seconds, big-endian),
//	len(account) (1 byte), account, len(address) (1 byte), address, list
func sign(k Key, s Subscription) string {
	p := make([]byte, 0, 1+8+1+len(s.AccountID)+1+len(s.Address)+len(s.List))
	p = append(p, version2)
	p = binary.BigEndian.AppendUint64(p, uint64(s.Expires.Unix()))
	p = append(p, byte(len(s.AccountID)))
	p = append(p, s.AccountID...)
	p = append(p, byte(len(s.Address)))
	p = append(p, s.Address...)
	p = append(p, s.List...)
	payload := b64.EncodeToString(p)
	return k.ID + "." + payload + "." + b64.EncodeToString(mac(k, version2, payload))
}

// mac is the token MAC of payload (its base64url text) under k, in the
// context of version.
func mac(k Key, version byte, payload string) []byte {
	h := hmac.New(sha256.New, k.Secret)
	h.Write([]byte(tokenContext(version)))
	h.Write([]byte{0})
	h.Write([]byte(k.ID))
	h.Write([]byte{0})
	h.Write([]byte(payload))
	return h.Sum(nil)[:16]
}

// verify checks token against keys and returns what it names; an expired
// token's subscription comes with ErrExpiredToken.
func verify(keys []Key, token string, now time.Time) (Subscription, error) {
	id, rest, ok1 := strings.Cut(token, ".")
	payload, sig, ok2 := strings.Cut(rest, ".")
	if !ok1 || !ok2 || len(token) > maxTokenBytes {
		return Subscription{}, ErrInvalidToken
	}
	var key *Key
	for i := range keys {
		if keys[i].ID == id {
			key = &keys[i]
			break
		}
	}
	p, err1 := b64.DecodeString(payload)
	got, err2 := b64.DecodeString(sig)
	if key == nil || err1 != nil || err2 != nil || len(p) == 0 || (p[0] != version1 && p[0] != version2) {
		return Subscription{}, ErrInvalidToken
	}
	// The version byte picks the MAC's context: a payload is only ever
	// read in the version its MAC was made for.
	if !hmac.Equal(got, mac(*key, p[0], payload)) {
		return Subscription{}, ErrInvalidToken
	}
	s, ok := parsePayload(p)
	if !ok {
		return Subscription{}, ErrInvalidToken
	}
	if !now.Before(s.Expires) {
		return s, ErrExpiredToken
	}
	return s, nil
}

// parsePayload reads a payload whose MAC has been checked.
func parsePayload(p []byte) (Subscription, bool) {
	if len(p) < 10 {
		return Subscription{}, false
	}
	s := Subscription{Expires: time.Unix(int64(binary.BigEndian.Uint64(p[1:9])), 0).UTC()}
	n, rest := int(p[9]), p[10:]
	if len(rest) < n {
		return Subscription{}, false
	}
	s.AccountID, rest = string(rest[:n]), rest[n:]
	switch p[0] {
	case version1:
		// Account and address, no list: made by a one-click header whose
		// list was not recorded. All lists keeps newsletters away and
		// lets receipts through.
		s.Address, s.Scope = string(rest), postroom.ScopeLists
	case version2:
		if len(rest) < 1 || len(rest) < 1+int(rest[0]) {
			return Subscription{}, false
		}
		n, rest = int(rest[0]), rest[1:]
		s.Address, s.List = string(rest[:n]), string(rest[n:])
		s.Scope = postroom.ScopeList
		if s.List == "" {
			s.Scope = postroom.ScopeAll
		}
	}
	if s.AccountID == "" || s.Address == "" {
		return Subscription{}, false
	}
	return s, true
}
