package postroom_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/postroom/postroom"
)

func TestDeliveryErrors(t *testing.T) {
	errFor := map[string]error{
		"perm@example.com":      &postroom.DeliveryError{Kind: postroom.DeliveryPermanent, Code: 550, Enhanced: "5.1.1", Text: "no such user"},
		"temp@example.com":      &postroom.DeliveryError{Code: 451, Enhanced: "4.3.0", Text: "try later"},
		"net@example.com":       &postroom.DeliveryError{Err: errors.New("connection reset")},
		"plain@example.com":     errors.New("disk full"),
		"uncertain@example.com": &postroom.DeliveryError{Kind: postroom.DeliveryUncertain, Err: errors.New("EOF")},
		"partial@example.com":   &postroom.PartialError{Refused: []postroom.RefusedRecipient{{Address: "audit@example.com", Err: &postroom.DeliveryError{Kind: postroom.DeliveryPermanent, Code: 550, Text: "no"}}}},
		"deadline@example.com":  fmt.Errorf("dial: %w", context.DeadlineExceeded),
	}
	want := map[string]string{
		"ok@example.com":        "sent ",
		"perm@example.com":      "rejected hard-bounce: 550 5.1.1 no such user",
		"temp@example.com":      "deferred soft-bounce: 451 4.3.0 try later",
		"net@example.com":       "deferred connection-failed",
		"plain@example.com":     "deferred connection-failed",
		"uncertain@example.com": "unknown connection-lost-after-data",
		"partial@example.com":   "sent bcc-rejected: audit@example.com (550 no)",
		"deadline@example.com":  "deferred timeout",
	}
	var addrs []string
	for a := range want {
		addrs = append(addrs, a)
	}
	call := smallCall(addrs...)
	call.Message.BCC = "audit@example.com"
	m := newMailer(t, postroom.TransportFunc(func(_ context.Context, env *postroom.Envelope) error { return errFor[env.To[0]] }), postroom.Options{})
	results, err := m.Send(t.Context(), call)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		if got := string(r.Status) + " " + r.Reason; got != want[r.Email] {
			t.Errorf("%s: %q, want %q", r.Email, got, want[r.Email])
		}
		if !sendIDPattern.MatchString(r.SendID) {
			t.Errorf("%s: send_id %q", r.Email, r.SendID)
		}
	}
}

type queuing struct{ postroom.TransportFunc }

func (queuing) Queued() bool { return true }

func TestQueued(t *testing.T) {
	tr := queuing{func(context.Context, *postroom.Envelope) error { return nil }}
	results, err := newMailer(t, tr, postroom.Options{}).Send(t.Context(), smallCall("a@example.com"))
	if err != nil || results[0].Status != postroom.StatusQueued {
		t.Fatalf("Send = %v, %v; want queued", results, err)
	}
}

func TestCancelMidCall(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var calls atomic.Int64
	var accepted sync.Map
	tr := postroom.TransportFunc(func(ctx context.Context, env *postroom.Envelope) error {
		if calls.Add(1) == 50 {
			cancel()
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		accepted.Store(env.To[0], true)
		return nil
	})
	call := smallCall()
	for i := range 1000 {
		call.Recipients = append(call.Recipients, postroom.Recipient{Email: fmt.Sprintf("u%d@example.com", i)})
	}
	before := runtime.NumGoroutine()
	const workers = 4
	results, err := newMailer(t, tr, postroom.Options{Concurrency: workers}).Send(ctx, call)
	if !errors.Is(err, context.Canceled) || len(results) != 1000 {
		t.Fatalf("err %v, %d results", err, len(results))
	}
	sent := 0
	for i, r := range results {
		_, ok := accepted.Load(r.Email)
		switch {
		case r.Email != call.Recipients[i].Email:
			t.Fatalf("result %d is for %s", i, r.Email)
		case ok && r.Status == postroom.StatusSent:
			sent++
		case !ok && r.Status == postroom.StatusDeferred && r.Code == postroom.ReasonCanceled && r.Reason == "canceled":
		default:
			t.Fatalf("result %d = %+v, accepted by the transport: %v", i, r, ok)
		}
	}
	// The 50th call cancels. The calls in flight beside it (at most
	// workers-1) may land on either side of the cancel; no recipient is
	// handed over once a worker has seen it.
	if sent > 49+workers-1 || sent < 49-(workers-1) || calls.Load() > 50+workers-1 {
		t.Fatalf("%d sent, %d transport calls", sent, calls.Load())
	}
	waitGoroutines(t, before)
}

func TestTransportUnusable(t *testing.T) {
	var n atomic.Int64
	tr := postroom.TransportFunc(func(ctx context.Context, env *postroom.Envelope) error {
		n.Add(1)
		return &postroom.DeliveryError{Code: 535, Enhanced: "5.7.8", Text: "bad credentials", Err: postroom.ErrTransportUnusable}
	})
	call := smallCall()
	for i := range 25000 {
		call.Recipients = append(call.Recipients, postroom.Recipient{Email: fmt.Sprintf("u%d@example.com", i)})
	}
	results, err := newMailer(t, tr, postroom.Options{Concurrency: 4}).Send(t.Context(), call)
	if !errors.Is(err, postroom.ErrTransportUnusable) || len(results) != 25000 {
		t.Fatalf("err %v, %d results", err, len(results))
	}
	if n.Load() > 4 {
		t.Fatalf("the transport was called %d times after it said it was unusable", n.Load())
	}
	for i, r := range results {
		if r.Status != postroom.StatusDeferred || r.Code != postroom.ReasonTransportUnusable || r.Err == nil {
			t.Fatalf("result %d = %+v", i, r)
		}
	}
}
