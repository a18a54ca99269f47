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

// tokenContext separates this package's MACs from any other use of the
// keys.
const tokenContext = "postroom-unsubscribe-v1"

// payloadVersion is the first byte of a token's payload.
const payloadVersion = 1

// b64 is strict: a token has one spelling (no stray trailing bits).
var b64 = base64.RawURLEncoding.Strict()

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

// sign makes the token of (account, address) expiring at exp, under k.
func sign(k Key, account, address string, exp time.Time) string {
	p := make([]byte, 0, 1+8+1+len(account)+len(address))
	p = append(p, payloadVersion)
	p = binary.BigEndian.AppendUint64(p, uint64(exp.Unix()))
	p = append(p, byte(len(account)))
	p = append(p, account...)
	p = append(p, address...)
	payload := b64.EncodeToString(p)
	return k.ID + "." + payload + "." + b64.EncodeToString(mac(k, payload))
}

// mac is the token MAC of payload (its base64url text) under k.
func mac(k Key, payload string) []byte {
	h := hmac.New(sha256.New, k.Secret)
	h.Write([]byte(tokenContext))
	h.Write([]byte{0})
	h.Write([]byte(k.ID))
	h.Write([]byte{0})
	h.Write([]byte(payload))
	return h.Sum(nil)[:16]
}

// claims are what a valid token says.
type claims struct {
	account, address string
	expires          time.Time
}

// verify checks token against keys and returns its claims; an expired
// token's claims come with ErrExpiredToken.
func verify(keys []Key, token string, now time.Time) (claims, error) {
	id, rest, ok1 := strings.Cut(token, ".")
	payload, sig, ok2 := strings.Cut(rest, ".")
	if !ok1 || !ok2 || len(token) > 2048 {
		return claims{}, ErrInvalidToken
	}
	var key *Key
	for i := range keys {
		if keys[i].ID == id {
			key = &keys[i]
			break
		}
	}
	got, err := b64.DecodeString(sig)
	if key == nil || err != nil || !hmac.Equal(got, mac(*key, payload)) {
		return claims{}, ErrInvalidToken
	}
	p, err := b64.DecodeString(payload)
	if err != nil || len(p) < 10 || p[0] != payloadVersion || len(p) < 10+int(p[9]) {
		return claims{}, ErrInvalidToken
	}
	n := int(p[9])
	c := claims{
		expires: time.Unix(int64(binary.BigEndian.Uint64(p[1:9])), 0),
		account: string(p[10 : 10+n]),
		address: string(p[10+n:]),
	}
	if c.account == "" || c.address == "" {
		return claims{}, ErrInvalidToken
	}
	if !now.Before(c.expires) {
		return c, ErrExpiredToken
	}
	return c, nil
}
