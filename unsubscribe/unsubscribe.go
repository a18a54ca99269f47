package unsubscribe

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/option"
	"github.com/postroom/postroom/suppression"
)

// DefaultTTL is how long a token is honoured by default: a year, since
// people unsubscribe from old messages.
const DefaultTTL = 365 * 24 * time.Hour

// Observer records an unsubscribe: package suppression's Memory and SQL
// satisfy it (an Unsubscribe observation lists the address at once, as
// unsub, in the observation's Scope). It must be safe for concurrent use.
type Observer interface {
	Observe(ctx context.Context, o suppression.Observation) (*suppression.Entry, error)
}

// Options configure an Unsubscriber. New validates and copies them.
type Options struct {
	// Keys sign and verify tokens: Keys[0] signs, every key verifies the
	// tokens naming its ID (see the package doc for rotation). At least
	// one is required; IDs must differ. The Unsubscriber copies them.
	Keys []Key

	// BaseURL is the https URL the handler serves, to which URL appends
	// the token as the last path segment: "https://example.com/u/" makes
	// https://example.com/u/TOKEN. Required for URL; empty means URL
	// fails (Token still works).
	BaseURL string

	// TTL is how long a token is honoured. Zero means DefaultTTL.
	TTL time.Duration

	// Suppressions records each unsubscribe. Required.
	Suppressions Observer

	// OnEvent, when not nil, receives an unsub event for each unsubscribe
	// recorded, from the request's goroutine: it must be safe for
	// concurrent use. Nil means none.
	OnEvent func(ctx context.Context, e postroom.Event)

	// Logger receives the failures of Suppressions. Nil discards every record
	// (slog.New(slog.DiscardHandler)), as for every Logger of the module
	// (package option).
	Logger *slog.Logger

	// Now is the clock. Nil means time.Now.
	Now func() time.Time
}

// Unsubscriber makes tokens and URLs and is the http.Handler that honours
// them. Make one with New; it is immutable and safe for concurrent use.
type Unsubscriber struct {
	opts Options
}

var _ postroom.UnsubscribeURLs = (*Unsubscriber)(nil)

// opNew is New's name in its *option.Error.
const opNew = "unsubscribe.New"

// New returns an Unsubscriber, or an *option.Error naming the field of
// opts that is missing or out of range.
func New(opts Options) (*Unsubscriber, error) {
	if len(opts.Keys) == 0 {
		return nil, option.Errorf(opNew, "Options.Keys", "is empty")
	}
	keys := make([]Key, len(opts.Keys))
	seen := make(map[string]bool, len(keys))
	for i, k := range opts.Keys {
		if err := checkKey(k); err != nil {
			return nil, &option.Error{Op: opNew, Field: fmt.Sprintf("Options.Keys[%d]", i), Reason: "is refused", Err: err}
		}
		if seen[k.ID] {
			return nil, option.Errorf(opNew, fmt.Sprintf("Options.Keys[%d].ID", i), "%q is used twice", k.ID)
		}
		seen[k.ID] = true
		keys[i] = Key{ID: k.ID, Secret: append([]byte(nil), k.Secret...)}
	}
	opts.Keys = keys
	if opts.BaseURL != "" {
		u, err := url.Parse(opts.BaseURL)
		if err != nil || u.Scheme != "https" || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			return nil, option.Errorf(opNew, "Options.BaseURL", "%q is not an https URL without query or fragment (RFC 8058 needs https)", opts.BaseURL)
		}
		if !strings.HasSuffix(opts.BaseURL, "/") {
			opts.BaseURL += "/"
		}
	}
	if err := option.Default(opNew, "Options.TTL", &opts.TTL, DefaultTTL); err != nil {
		return nil, err
	}
	if opts.Suppressions == nil {
		return nil, option.Errorf(opNew, "Options.Suppressions", "is nil: it is required")
	}
	opts.Logger = option.Logger(opts.Logger)
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Unsubscriber{opts: opts}, nil
}

// Token returns the token that unsubscribes address from list in
// accountID, signed with Options.Keys[0], valid for Options.TTL (see the
// package doc for its format). accountID is 1 to 255 bytes, address 1 to
// 254; list is the list id of the message (RFC 2919, at most
// postroom.MaxListIDBytes, kept lower-cased), or "" for a transactional
// message's token, whose one-click POST unsubscribes the address from all
// of the account's mail (postroom.Options.UnsubscribeAllMail).
func (u *Unsubscriber) Token(accountID, address, list string) (string, error) {
	if accountID == "" || len(accountID) > 255 {
		return "", fmt.Errorf("unsubscribe: Token: account id of %d bytes, want 1 to 255", len(accountID))
	}
	address = strings.TrimSpace(address)
	if address == "" || len(address) > 254 {
		return "", fmt.Errorf("unsubscribe: Token: address of %d bytes, want 1 to 254", len(address))
	}
	list, err := checkList(list)
	if err != nil {
		return "", fmt.Errorf("unsubscribe: Token: %v", err)
	}
	s := Subscription{AccountID: accountID, Address: address, List: list, Expires: u.opts.Now().Add(u.opts.TTL)}
	return sign(u.opts.Keys[0], s), nil
}

// URL returns Options.BaseURL followed by Token(accountID, address,
// list): the URI for the List-Unsubscribe header of a message of list
// ("" for a transactional message). It is postroom.UnsubscribeURLs.URL.
func (u *Unsubscriber) URL(accountID, address, list string) (string, error) {
	if u.opts.BaseURL == "" {
		return "", fmt.Errorf("unsubscribe: URL: Options.BaseURL is empty")
	}
	t, err := u.Token(accountID, address, list)
	if err != nil {
		return "", err
	}
	return u.opts.BaseURL + t, nil
}

// Verify returns what token names (see Subscription), or an error:
// ErrInvalidToken, or ErrExpiredToken (with what it named). Tokens of
// both versions verify; see the package doc for their meanings.
func (u *Unsubscriber) Verify(token string) (Subscription, error) {
	return verify(u.opts.Keys, token, u.opts.Now())
}
