package idempotency

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/postroom/postroom"
)

func TestRunInvalidKey(t *testing.T) {
	s, err := NewMemory(Options{})
	if err != nil {
		t.Fatal(err)
	}
	tr := newRelay()
	m := newMailer(t, tr, 0)
	for _, key := range []string{"", strings.Repeat("k", MaxKeyBytes+1), "a\nb", "\xff"} {
		if _, err := Run(t.Context(), s, m, key, postroom.OpSend, newCall("a@example.org")); !errors.Is(err, ErrInvalidKey) {
			t.Errorf("key %q: %v, want ErrInvalidKey", key, err)
		}
	}
	if tr.total() != 0 {
		t.Errorf("%d messages sent", tr.total())
	}
}

// TestHashCallCanonical checks that the hash is of the payload, not of
// its spelling, and that it covers the operation.
func TestHashCallCanonical(t *testing.T) {
	decode := func(body string) *postroom.Call {
		c, err := postroom.DecodeCall([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	a := decode(`{"key":"k","account_id":"a","recipients":[{"email":"x@example.org","params":{"b":1,"a":"2"}}]}`)
	b := decode(`{ "recipients": [ {"params": {"b": 1, "a": "2"}, "email": "x@example.org"} ], "account_id": "a", "key": "k" }`)
	ha, _ := HashCall(postroom.OpSend, a)
	hb, _ := HashCall(postroom.OpSend, b)
	ht, _ := HashCall(postroom.OpSendTemplate, a)
	if ha != hb {
		t.Error("the same payload spelled differently hashes differently")
	}
	if ha == ht {
		t.Error("the operation is not part of the hash")
	}
	// The hash is of the call's canonical JSON, json.Marshal's: HTML
	// characters escaped, no space, params in their decoded order.
	c := decode(`{"key":"k","account_id":"a","message":{"subject":"<b> & \u2028","html":"<p>{{x}}</p>"},` +
		`"recipients":[{"email":"x@example.org","params":{"z":"<&>","a":[1,{"y":2,"b":3}]}}],"global_params":{"q":1,"c":2}}`)
	body, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	want := sha256.Sum256(append([]byte("message.send\x00"), body...))
	if got, _ := HashCall(postroom.OpSend, c); got != Hash(want) {
		t.Errorf("HashCall is not SHA-256 of the operation and json.Marshal of the call (%s)", body)
	}
}

// failingStore fails HandOver for one recipient index.
type failingStore struct {
	Store
	at  int
	err error
}

func (s *failingStore) Claim(ctx context.Context, k Key, h Hash) (Claim, error) {
	c, err := s.Store.Claim(ctx, k, h)
	if err != nil {
		return nil, err
	}
	return &failingClaim{Claim: c, s: s}, nil
}

type failingClaim struct {
	Claim
	s *failingStore
}

func (c *failingClaim) HandOver(ctx context.Context, i int, sendID string) error {
	if i == c.s.at {
		return c.s.err
	}
	return c.Claim.HandOver(ctx, i, sendID)
}

// TestRunStoreFails checks that once the store fails, no more messages
// leave, every result comes back with ErrStore, and a retry sends what
// was kept back.
func TestRunStoreFails(t *testing.T) {
	mem, err := NewMemory(Options{})
	if err != nil {
		t.Fatal(err)
	}
	errDown := errors.New("database down")
	s := &failingStore{Store: mem, at: 1, err: errDown}
	tr := newRelay()
	m := newMailer(t, tr, 1)
	call := newCall(addrs(3)...)
	res, err := Run(t.Context(), s, m, "k1", postroom.OpSend, call)
	if !errors.Is(err, ErrStore) || !errors.Is(err, errDown) {
		t.Fatalf("err = %v, want ErrStore wrapping the store's error", err)
	}
	if res[0].Status != postroom.StatusSent {
		t.Errorf("recipient 0: %+v, want sent", res[0])
	}
	for _, r := range res[1:] {
		if r.Status != postroom.StatusDeferred || r.Code != postroom.ReasonNotSent || !errors.Is(r.Err, errDown) {
			t.Errorf("%s: %+v, want deferred not-sent with the store's error", r.Email, r)
		}
	}
	if tr.total() != 1 {
		t.Fatalf("%d messages sent after the store failed, want 1", tr.total())
	}
	s.at = -1
	res, err = Run(t.Context(), s, m, "k1", postroom.OpSend, call)
	if err != nil {
		t.Fatal(err)
	}
	for i, a := range addrs(3) {
		if res[i].Status != postroom.StatusSent || tr.count(a) != 1 {
			t.Errorf("retry: recipient %d %+v, %d messages; want sent once", i, res[i], tr.count(a))
		}
	}
}

// TestRunReleasesOnPanic checks that a transport's panic, which the
// Mailer re-raises, does not leave the key held.
func TestRunReleasesOnPanic(t *testing.T) {
	s, err := NewMemory(Options{})
	if err != nil {
		t.Fatal(err)
	}
	m := newMailer(t, postroom.TransportFunc(func(context.Context, *postroom.Envelope) error { panic("transport bug") }), 1)
	call := newCall("a@example.org")
	func() {
		defer func() { _ = recover() }()
		_, _ = Run(t.Context(), s, m, "k1", postroom.OpSend, call)
		t.Error("Run did not re-raise the panic")
	}()
	h, err := HashCall(postroom.OpSend, call)
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.Claim(t.Context(), Key{AccountID: "acct", Key: "k1"}, h)
	if err != nil {
		t.Fatalf("Claim after the panic: %v, want the key free", err)
	}
	defer c.Release(t.Context())
	// The message was handed over when the transport panicked.
	if e := c.Entries(); len(e) != 1 || e[0].Final() || e[0].Result.SendID == "" {
		t.Errorf("entries %+v, want recipient 0 handed over without a final result", e)
	}
}

// TestRunWithHooks checks that the caller's OnResult sees every recipient
// exactly once, on the first call and on a retry that finds some results
// recorded, and that a message the caller's BeforeSend keeps back stays
// open: the retry sends it.
func TestRunWithHooks(t *testing.T) {
	s, err := NewMemory(Options{})
	if err != nil {
		t.Fatal(err)
	}
	tr := newRelay()
	m := newMailer(t, tr, 1)
	call := newCall("a@example.org", "b@example.org", "c@example.org")
	errHeld := errors.New("held")
	var seen []int
	first, err := RunWith(t.Context(), s, m, "k1", postroom.OpSend, call, postroom.RunOptions{
		BeforeSend: func(_ context.Context, i int, _ string) error {
			if i == 1 {
				return errHeld
			}
			return nil
		},
		OnResult: func(i int, _ postroom.Result) { seen = append(seen, i) }, // one worker
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != 3 || first[1].Code != postroom.ReasonNotSent || !errors.Is(first[1].Err, errHeld) {
		t.Fatalf("first call: reported %v, results %+v", seen, first)
	}
	seen = nil
	second, err := RunWith(t.Context(), s, m, "k1", postroom.OpSend, call, postroom.RunOptions{
		OnResult: func(i int, _ postroom.Result) { seen = append(seen, i) },
	})
	if err != nil {
		t.Fatal(err)
	}
	count := map[int]int{}
	for _, i := range seen {
		count[i]++
	}
	if len(count) != 3 || count[0] != 1 || count[1] != 1 || count[2] != 1 {
		t.Errorf("retry reported %v, want each of 0, 1, 2 once", seen)
	}
	if second[1].Status != postroom.StatusSent || tr.count("b@example.org") != 1 || tr.total() != 3 {
		t.Errorf("retry: %+v; b sent %d times, %d messages in all", second[1], tr.count("b@example.org"), tr.total())
	}
}
