package postroom

import (
	"context"
	"crypto/subtle"
)

// Authenticator decides whether a call's key is valid for its account.
//
// Authenticate returns nil to accept the call, or an error (which the Mailer
// wraps so that errors.Is(err, ErrUnauthorized) holds) to refuse it. It must
// be safe for concurrent use.
type Authenticator interface {
	Authenticate(ctx context.Context, accountID, key string) error
}

// StaticKeys is an Authenticator over a fixed map of account id to the keys
// it accepts. Keys are compared in constant time, and an unknown account
// costs the same comparisons as a known one. The Mailer does not modify it;
// the caller must not modify it while a Mailer uses it.
type StaticKeys map[string][]string

// Authenticate accepts key if it is one of accountID's keys.
func (s StaticKeys) Authenticate(_ context.Context, accountID, key string) error {
	keys, known := s[accountID]
	ok := 0
	if !known {
		// Compare against something all the same so that timing does not
		// tell known accounts from unknown ones.
		keys = []string{"\x00postroom-no-such-account"}
	}
	for _, k := range keys {
		ok |= subtle.ConstantTimeCompare([]byte(k), []byte(key))
	}
	if ok == 1 && known && key != "" {
		return nil
	}
	return ErrUnauthorized
}

// NoAuth accepts every call. Use it when the application authenticates
// callers before they reach the Mailer (for example in its HTTP middleware).
type NoAuth struct{}

// Authenticate returns nil.
func (NoAuth) Authenticate(context.Context, string, string) error { return nil }
