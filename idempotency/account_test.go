package idempotency

import (
	"context"
	"errors"
	"testing"

	"github.com/postroom/postroom"
)

// claimCounter counts the Claims that reach its store.
type claimCounter struct {
	Store
	claims int
}

func (s *claimCounter) Claim(ctx context.Context, k Key, h Hash) (Claim, error) {
	s.claims++
	return s.Store.Claim(ctx, k, h)
}

// TestRunAccountIDRefused: an account id that no store can keep (a NUL, a
// line break, invalid UTF-8, over 255 bytes) is a ValidationError on
// account_id before the store is asked, and nothing is sent.
func TestRunAccountIDRefused(t *testing.T) {
	mem, err := NewMemory(Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := &claimCounter{Store: mem}
	tr := newRelay()
	m := newMailer(t, tr, 1)
	long := make([]byte, 256)
	for i := range long {
		long[i] = 'a'
	}
	for _, id := range []string{"acme\x00", "a\nb", "\xff", string(long)} {
		call := newCall(addrs(2)...)
		call.AccountID = id
		_, err := Run(t.Context(), s, m, "k1", postroom.OpSend, call)
		var ve *postroom.ValidationError
		if !errors.As(err, &ve) || ve.Field != "account_id" {
			t.Errorf("account %q: err = %v, want a ValidationError on account_id", id, err)
		}
	}
	if s.claims != 0 || tr.total() != 0 {
		t.Errorf("%d claims, %d messages; want none", s.claims, tr.total())
	}
}
