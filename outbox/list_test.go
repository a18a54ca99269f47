package outbox_test

import (
	"errors"
	"testing"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/testkit/outboxenv"
	"github.com/postroom/postroom/outbox"
)

func TestCallsNewestFirstByPage(t *testing.T) {
	t.Parallel()
	engines(t, func(t *testing.T, eng outboxenv.Engine) {
		e := newEnv(t, setup{engine: eng, noWork: true})
		var ids []string
		for i := range 3 {
			call := newCall("list", i+1)
			ids = append(ids, e.enqueue(t, postroom.OpSend, call, outbox.EnqueueOptions{}))
		}
		other := newCall("other", 1)
		other.AccountID = "other"
		e.enqueue(t, postroom.OpSend, other, outbox.EnqueueOptions{})

		page, next, err := e.ob.Calls(t.Context(), outbox.CallsQuery{AccountID: "acct", Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		if len(page) != 2 || page[0].ID != ids[2] || page[1].ID != ids[1] || next == "" {
			t.Fatalf("first page %+v next %q, want calls %s, %s and a cursor", page, next, ids[2], ids[1])
		}
		if page[0].Recipients != 3 || page[0].Counts[postroom.StatusQueued] != 3 || page[0].State != postroom.CallQueued || page[0].Operation != "message.send" {
			t.Errorf("newest call %+v, want 3 recipients queued, not done", page[0])
		}
		page, next, err = e.ob.Calls(t.Context(), outbox.CallsQuery{AccountID: "acct", Limit: 2, Before: next})
		if err != nil {
			t.Fatal(err)
		}
		if len(page) != 1 || page[0].ID != ids[0] || next != "" {
			t.Fatalf("second page %+v next %q, want call %s alone and no cursor", page, next, ids[0])
		}

		t.Run("bad cursor", func(t *testing.T) {
			if _, _, err := e.ob.Calls(t.Context(), outbox.CallsQuery{AccountID: "acct", Before: "%%%"}); !errors.Is(err, outbox.ErrBadCursor) {
				t.Errorf("err %v, want ErrBadCursor", err)
			}
		})
		t.Run("limit", func(t *testing.T) {
			for _, n := range []int{-1, outbox.MaxCallsLimit + 1} {
				if _, _, err := e.ob.Calls(t.Context(), outbox.CallsQuery{AccountID: "acct", Limit: n}); err == nil {
					t.Errorf("Limit %d accepted", n)
				}
			}
		})
		t.Run("account", func(t *testing.T) {
			_, _, err := e.ob.Calls(t.Context(), outbox.CallsQuery{AccountID: "acct\x00"})
			var ve *postroom.ValidationError
			if !errors.As(err, &ve) || ve.Field != "account_id" {
				t.Errorf("err %v, want a ValidationError on account_id", err)
			}
		})
		t.Run("no calls", func(t *testing.T) {
			page, next, err := e.ob.Calls(t.Context(), outbox.CallsQuery{AccountID: "none"})
			if err != nil || len(page) != 0 || next != "" {
				t.Errorf("got %v %q %v, want nothing", page, next, err)
			}
		})
	})
}

func TestCallsCountsOnceDone(t *testing.T) {
	t.Parallel()
	engines(t, func(t *testing.T, eng outboxenv.Engine) {
		e := newEnv(t, setup{engine: eng})
		id := e.enqueue(t, postroom.OpSend, newCall("counts", 4), outbox.EnqueueOptions{})
		want := e.wait(t, id)
		page, _, err := e.ob.Calls(t.Context(), outbox.CallsQuery{AccountID: "acct"})
		if err != nil {
			t.Fatal(err)
		}
		if len(page) != 1 || page[0].State != postroom.CallDone || page[0].Counts[postroom.StatusSent] != 4 || len(page[0].Counts) != len(want.Counts) {
			t.Errorf("got %+v, want the call done with Status's counts %v", page, want.Counts)
		}
	})
}
