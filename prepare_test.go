package postroom_test

import (
	"context"
	"encoding/base64"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/transport"
)

// TestValidate checks Validate against Run on the same calls: the same
// call-level error, the same invalid recipients, and nothing sent.
func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		call *postroom.Call
	}{
		{"valid", smallCall("a@example.org", "b@example.org")},
		{"bad and duplicate recipients", smallCall("a@example.org", "not an address", "A@example.org")},
		{"no recipients", smallCall()},
		{"bad from", func() *postroom.Call {
			c := smallCall("a@example.org")
			c.Message.FromEmail = "nope"
			return c
		}()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mem := transport.NewMemory()
			m := newMailer(t, mem, postroom.Options{})
			got, err := m.Validate(t.Context(), postroom.OpSend, tt.call)
			if mem.Len() != 0 {
				t.Fatalf("Validate sent %d messages", mem.Len())
			}
			want, wantErr := m.Run(t.Context(), postroom.OpSend, tt.call, postroom.RunOptions{})
			var ve, wve *postroom.ValidationError
			if (err == nil) != (wantErr == nil) || errors.Is(err, postroom.ErrNoRecipients) != errors.Is(wantErr, postroom.ErrNoRecipients) ||
				errors.As(err, &ve) != errors.As(wantErr, &wve) {
				t.Fatalf("Validate: %v, Run: %v", err, wantErr)
			}
			if err != nil {
				return
			}
			for i, r := range got {
				switch {
				case r.Status == "" && want[i].Status == postroom.StatusInvalid:
					t.Errorf("recipient %d: Validate passed it, Run: %+v", i, want[i])
				case r.Status != "" && (r.Status != want[i].Status || r.Reason != want[i].Reason):
					t.Errorf("recipient %d: Validate %+v, Run %+v", i, r, want[i])
				}
			}
		})
	}
	if _, err := newMailer(t, transport.NewMemory(), postroom.Options{}).Validate(t.Context(), postroom.Operation(7), smallCall("a@example.org")); err == nil {
		t.Error("Validate accepted an unknown operation")
	}
}

// TestPreparedRunSome checks a run of some recipients: one Result per
// index given, in that order, the hooks with the recipients' indexes in
// the call, the checks of the whole call (a duplicate of a recipient not
// run stays invalid), and messages for those recipients only.
func TestPreparedRunSome(t *testing.T) {
	mem := transport.NewMemory()
	m := newMailer(t, mem, postroom.Options{Concurrency: 3})
	call := smallCall("a@example.org", "b@example.org", "not an address", "A@example.org", "c@example.org", "d@example.org")
	p, err := m.Prepare(t.Context(), postroom.OpSend, call)
	if err != nil {
		t.Fatal(err)
	}
	indexes := []int{5, 3, 1, 2}
	var mu sync.Mutex
	results := map[int]postroom.Result{}
	before := map[int]string{}
	got, err := p.RunSome(t.Context(), indexes, postroom.RunOptions{
		OnResult: func(i int, r postroom.Result) {
			mu.Lock()
			defer mu.Unlock()
			if _, dup := results[i]; dup {
				t.Errorf("OnResult twice for %d", i)
			}
			results[i] = r
		},
		BeforeSend: func(_ context.Context, i int, id string) error {
			mu.Lock()
			defer mu.Unlock()
			before[i] = id
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(indexes) {
		t.Fatalf("%d results for %d indexes", len(got), len(indexes))
	}
	want := map[int]postroom.Status{5: postroom.StatusSent, 3: postroom.StatusInvalid, 1: postroom.StatusSent, 2: postroom.StatusInvalid}
	for k, i := range indexes {
		r := got[k]
		if r.Email != call.Recipients[i].Email || r.Status != want[i] {
			t.Errorf("results[%d] = %+v, want recipient %d %s", k, r, i, want[i])
		}
		if results[i] != r {
			t.Errorf("OnResult(%d) = %+v, results[%d] = %+v", i, results[i], k, r)
		}
		if r.Status == postroom.StatusSent && before[i] != r.SendID {
			t.Errorf("BeforeSend(%d) had send id %q, the Result %q", i, before[i], r.SendID)
		}
	}
	if got[1].Code != postroom.ReasonDuplicate {
		t.Errorf("recipient 3: %+v, want a duplicate of recipient 0, which was not run", got[1])
	}
	if len(results) != len(indexes) || len(before) != 2 {
		t.Errorf("OnResult for %d recipients, BeforeSend for %d; want %d and 2", len(results), len(before), len(indexes))
	}
	var to []string
	for _, e := range mem.Envelopes() {
		to = append(to, e.To[0])
	}
	slices.Sort(to)
	if !slices.Equal(to, []string{"b@example.org", "d@example.org"}) {
		t.Errorf("messages to %v, want b and d", to)
	}

	for _, bad := range [][]int{{6}, {-1}, {1, 1}} {
		if r, err := p.RunSome(t.Context(), bad, postroom.RunOptions{}); err == nil || r != nil {
			t.Errorf("RunSome(%v) = %v, %v; want an error and no results", bad, r, err)
		}
	}
	if r, err := p.RunSome(t.Context(), nil, postroom.RunOptions{}); err != nil || len(r) != 0 {
		t.Errorf("RunSome(nil) = %v, %v; want no results", r, err)
	}
	if n := len(mem.Envelopes()); n != 2 {
		t.Errorf("%d messages after the refused runs, want 2", n)
	}
}

// TestPreparedConcurrentRuns runs one Prepared from several goroutines at
// once (under -race): every recipient is sent once, each run's send ids
// are unique, and runs do not share them.
func TestPreparedConcurrentRuns(t *testing.T) {
	mem := transport.NewMemory()
	m := newMailer(t, mem, postroom.Options{})
	var addrs []string
	for i := range 40 {
		addrs = append(addrs, string(rune('a'+i%26))+string(rune('a'+i/26))+"@example.org")
	}
	call := smallCall(addrs...)
	p, err := m.Prepare(t.Context(), postroom.OpSend, call)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	runs := make([][]postroom.Result, 4)
	for g := range runs {
		wg.Go(func() {
			var idx []int
			for i := g; i < len(addrs); i += len(runs) {
				idx = append(idx, i)
			}
			r, err := p.RunSome(t.Context(), idx, postroom.RunOptions{})
			if err != nil {
				t.Error(err)
			}
			runs[g] = r
		})
	}
	wg.Wait()
	ids := map[string]bool{}
	for _, rs := range runs {
		for _, r := range rs {
			if r.Status != postroom.StatusSent || ids[r.SendID] {
				t.Errorf("%+v: not sent, or its send id seen before", r)
			}
			ids[r.SendID] = true
		}
	}
	if len(ids) != len(addrs) || mem.Len() != len(addrs) {
		t.Errorf("%d send ids, %d messages, want %d", len(ids), mem.Len(), len(addrs))
	}
}

// failingRand is an Options.Rand that always fails.
type failingRand struct{}

var errRand = errors.New("no randomness")

func (failingRand) Read([]byte) (int, error) { return 0, errRand }

// TestPrepareSeals checks what is drawn per run and what is not: Prepare
// and Validate read nothing of Options.Rand (a failing Rand fails the run,
// not them), and a Prepared run with the Rand and Now of a Send gives
// that Send's messages byte for byte.
func TestPrepareSeals(t *testing.T) {
	call := smallCall("a@example.org", "b@example.org")
	m := newMailer(t, transport.NewMemory(), postroom.Options{Rand: failingRand{}})
	if _, err := m.Validate(t.Context(), postroom.OpSend, call); err != nil {
		t.Fatalf("Validate read Options.Rand: %v", err)
	}
	p, err := m.Prepare(t.Context(), postroom.OpSend, call)
	if err != nil {
		t.Fatalf("Prepare read Options.Rand: %v", err)
	}
	if r, err := p.Run(t.Context(), postroom.RunOptions{}); !errors.Is(err, errRand) || r != nil {
		t.Fatalf("Run = %v, %v; want the Rand's error and no results", r, err)
	}

	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	sent := func(run func(*postroom.Mailer) error) map[string][]byte {
		mem := transport.NewMemory()
		if err := run(newMailer(t, mem, postroom.Options{Rand: &fixedRand{}, Now: func() time.Time { return now }})); err != nil {
			t.Fatal(err)
		}
		out := map[string][]byte{}
		for _, e := range mem.Envelopes() {
			out[e.To[0]] = e.Data
		}
		return out
	}
	want := sent(func(m *postroom.Mailer) error { _, err := m.Send(t.Context(), call); return err })
	got := sent(func(m *postroom.Mailer) error {
		p, err := m.Prepare(t.Context(), postroom.OpSend, call)
		if err != nil {
			return err
		}
		if _, err := m.Validate(t.Context(), postroom.OpSend, call); err != nil {
			return err
		}
		_, err = p.Run(t.Context(), postroom.RunOptions{})
		return err
	})
	if len(got) != 2 {
		t.Fatalf("%d messages, want 2", len(got))
	}
	for to, b := range want {
		if string(got[to]) != string(b) {
			t.Errorf("the Prepared's message to %s differs from Send's", to)
		}
	}
}

// TestPrepareStaticSize: files that alone exceed MaxMessageBytes refuse
// the call in Prepare (and Validate), as they refuse it in Send.
func TestPrepareStaticSize(t *testing.T) {
	call := smallCall("a@example.org")
	for _, name := range []string{"a.bin", "b.bin"} {
		call.Message.Attachments = append(call.Message.Attachments, postroom.Attachment{Name: name, Content: base64.StdEncoding.EncodeToString(make([]byte, 3500))})
	}
	m := newMailer(t, transport.NewMemory(), postroom.Options{MaxMessageBytes: 8000})
	var ve *postroom.ValidationError
	if _, err := m.Send(t.Context(), call); !errors.As(err, &ve) || ve.Field != "message" {
		t.Fatalf("Send: %v, want a ValidationError of message", err)
	}
	if _, err := m.Prepare(t.Context(), postroom.OpSend, call); !errors.As(err, &ve) || ve.Field != "message" {
		t.Fatalf("Prepare: %v, want a ValidationError of message (each file is within the limit, both are not)", err)
	}
	if _, err := m.Validate(t.Context(), postroom.OpSend, call); !errors.As(err, &ve) || ve.Field != "message" {
		t.Fatalf("Validate: %v, want a ValidationError of message", err)
	}
	call.Message.Attachments = call.Message.Attachments[:1]
	if _, err := m.Prepare(t.Context(), postroom.OpSend, call); err != nil {
		t.Fatalf("Prepare of one file: %v", err)
	}
}

// revocable is an Authenticator whose one key can be revoked.
type revocable struct {
	mu      sync.Mutex
	revoked bool
}

func (a *revocable) Authenticate(_ context.Context, accountID, key string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.revoked || accountID != "acct" || key != "k" {
		return postroom.ErrUnauthorized
	}
	return nil
}

// TestPreparedChecksAndAuthenticate: Checks is the caller's copy, and
// Authenticate asks Options.Auth again.
func TestPreparedChecksAndAuthenticate(t *testing.T) {
	auth := new(revocable)
	m := newMailer(t, transport.NewMemory(), postroom.Options{Auth: auth})
	p, err := m.Prepare(t.Context(), postroom.OpSend, smallCall("a@example.org", "bad"))
	if err != nil {
		t.Fatal(err)
	}
	c := p.Checks()
	if c[0].Status != "" || c[1].Status != postroom.StatusInvalid {
		t.Fatalf("Checks = %+v", c)
	}
	c[1] = postroom.Result{}
	if p.Checks()[1].Status != postroom.StatusInvalid {
		t.Error("a change to Checks' slice reached the Prepared")
	}
	if err := p.Authenticate(t.Context()); err != nil {
		t.Fatal(err)
	}
	auth.mu.Lock()
	auth.revoked = true
	auth.mu.Unlock()
	if err := p.Authenticate(t.Context()); !errors.Is(err, postroom.ErrUnauthorized) {
		t.Errorf("Authenticate after the revocation: %v, want ErrUnauthorized", err)
	}
}

// TestZeroPrepared: a Prepared not made by Prepare answers
// ErrZeroPrepared, never a panic.
func TestZeroPrepared(t *testing.T) {
	for _, p := range []*postroom.Prepared{nil, new(postroom.Prepared)} {
		if _, err := p.Run(t.Context(), postroom.RunOptions{}); !errors.Is(err, postroom.ErrZeroPrepared) {
			t.Errorf("Run: %v", err)
		}
		if _, err := p.RunSome(t.Context(), []int{0}, postroom.RunOptions{}); !errors.Is(err, postroom.ErrZeroPrepared) {
			t.Errorf("RunSome: %v", err)
		}
		if _, err := p.Preview(t.Context(), postroom.PreviewOptions{}); !errors.Is(err, postroom.ErrZeroPrepared) {
			t.Errorf("Preview: %v", err)
		}
		if err := p.Authenticate(t.Context()); !errors.Is(err, postroom.ErrZeroPrepared) {
			t.Errorf("Authenticate: %v", err)
		}
		if c := p.Checks(); c != nil {
			t.Errorf("Checks: %v", c)
		}
	}
}
