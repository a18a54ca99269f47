package outbox_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/testkit/outboxenv"
	"github.com/postroom/postroom/outbox"
	"github.com/postroom/postroom/templatestore"
)

// countingStore is a template store that counts its lookups.
type countingStore struct {
	postroom.TemplateStore
	calls atomic.Int64
}

func (s *countingStore) Template(ctx context.Context, accountID, id string) (string, error) {
	s.calls.Add(1)
	return s.TemplateStore.Template(ctx, accountID, id)
}

// TestPreparedOncePerJob: a job's run prepares its call once for all its
// batches (the stored template is looked up once per job), not once per
// batch.
func TestPreparedOncePerJob(t *testing.T) {
	t.Parallel()
	engines(t, func(t *testing.T, eng outboxenv.Engine) {
		mem := templatestore.NewMemory()
		if err := mem.Put("acct", "shipped", "Your order {{n}} has shipped."); err != nil {
			t.Fatal(err)
		}
		enq, err := postroom.New(transportNever(t), postroom.Options{Auth: postroom.NoAuth{}, Templates: mem})
		if err != nil {
			t.Fatal(err)
		}
		var sent atomic.Int64
		store := &countingStore{TemplateStore: mem}
		work, err := postroom.New(postroom.TransportFunc(func(context.Context, *postroom.Envelope) error {
			sent.Add(1)
			return nil
		}), postroom.Options{Auth: postroom.NoAuth{}, Templates: store})
		if err != nil {
			t.Fatal(err)
		}
		call := newCall("once", 30)
		call.Message.Text, call.Message.TextTemplateID = "", "shipped"
		// 3 jobs of 4 batches each.
		s := runUntilEnded(t, eng, enq, work, outbox.Options{JobSize: 10, BatchSize: 3}, postroom.OpSendTemplate, call)
		for i, r := range s.Results {
			if r.Status != postroom.StatusSent {
				t.Errorf("recipient %d: %+v, want sent", i, r)
			}
		}
		if n := sent.Load(); n != 30 {
			t.Errorf("%d messages sent, want 30", n)
		}
		if n := store.calls.Load(); n != 3 {
			t.Errorf("the worker looked the template up %d times, want 3 (once per job, not per batch)", n)
		}
	})
}

// revocable is an Authenticator whose one key can be revoked, and which
// counts its checks.
type revocable struct {
	revoked atomic.Bool
	checks  atomic.Int64
}

func (a *revocable) Authenticate(_ context.Context, accountID, key string) error {
	a.checks.Add(1)
	if a.revoked.Load() || accountID != "acct" || key != "k" {
		return postroom.ErrUnauthorized
	}
	return nil
}

// TestKeyRevokedMidJob: a job's run checks the call's key once, when it
// prepares the call, not once per batch: a key revoked while the job's
// first batch is handed over lets the whole job finish (the runs that
// start after it are refused: TestRefusedWhenSent).
func TestKeyRevokedMidJob(t *testing.T) {
	t.Parallel()
	engines(t, func(t *testing.T, eng outboxenv.Engine) {
		enq, err := postroom.New(transportNever(t), postroom.Options{Auth: postroom.NoAuth{}})
		if err != nil {
			t.Fatal(err)
		}
		auth := new(revocable)
		var sent atomic.Int64
		work, err := postroom.New(postroom.TransportFunc(func(context.Context, *postroom.Envelope) error {
			sent.Add(1)
			auth.revoked.Store(true) // revoked while the first batch is handed over
			return nil
		}), postroom.Options{Auth: auth, Concurrency: 1})
		if err != nil {
			t.Fatal(err)
		}
		call := newCall("revoked", 9)
		// One job of 3 batches.
		s := runUntilEnded(t, eng, enq, work, outbox.Options{JobSize: 9, BatchSize: 3}, postroom.OpSend, call)
		for i, r := range s.Results {
			if r.Status != postroom.StatusSent {
				t.Errorf("recipient %d: %+v, want sent (its job's key was checked before the revocation)", i, r)
			}
		}
		if n := sent.Load(); n != 9 {
			t.Errorf("%d messages sent, want 9", n)
		}
		if n := auth.checks.Load(); n != 1 {
			t.Errorf("the key was checked %d times for a job of 3 batches, want once", n)
		}
	})
}
