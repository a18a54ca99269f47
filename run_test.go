package postroom_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/transport"
)

// TestRunOnResult checks that OnResult sees every recipient exactly once,
// with the Result Run returns, the invalid ones included.
func TestRunOnResult(t *testing.T) {
	tr := transport.NewMemory()
	m := newMailer(t, tr, postroom.Options{Concurrency: 3})
	call := smallCall("a@example.com", "not-an-address", "b@example.com", "a@example.com", "c@example.com")
	var mu sync.Mutex
	seen := map[int][]postroom.Result{}
	results, err := m.Run(context.Background(), postroom.OpSend, call, postroom.RunOptions{
		OnResult: func(i int, r postroom.Result) {
			mu.Lock()
			defer mu.Unlock()
			seen[i] = append(seen[i], r)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != len(results) {
		t.Fatalf("OnResult saw %d recipients, want %d", len(seen), len(results))
	}
	for i, r := range results {
		if len(seen[i]) != 1 {
			t.Fatalf("recipient %d reported %d times", i, len(seen[i]))
		}
		if got := seen[i][0]; got.Status != r.Status || got.Reason != r.Reason || got.SendID != r.SendID || got.Email != r.Email {
			t.Errorf("recipient %d: OnResult got %+v, Run returned %+v", i, got, r)
		}
	}
	if results[1].Status != postroom.StatusInvalid || results[3].Code != postroom.ReasonDuplicate {
		t.Errorf("unexpected results %+v", results)
	}
}

// TestRunOnResultWhenCanceled checks that the recipients a canceled call
// never reaches are reported too.
func TestRunOnResultWhenCanceled(t *testing.T) {
	m := newMailer(t, transport.NewMemory(), postroom.Options{Concurrency: 1})
	ctx, cancel := context.WithCancel(context.Background())
	call := smallCall("a@example.com", "b@example.com", "c@example.com", "d@example.com")
	var n int
	results, err := m.Run(ctx, postroom.OpSend, call, postroom.RunOptions{
		OnResult: func(i int, r postroom.Result) {
			n++ // one worker: no concurrent calls
			cancel()
		},
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if n != len(results) {
		t.Fatalf("OnResult called %d times for %d recipients", n, len(results))
	}
	if results[3].Code != postroom.ReasonCanceled {
		t.Errorf("last recipient: %+v, want canceled", results[3])
	}
}

// TestRunBeforeSend checks that BeforeSend sees the send id before the
// transport does, and that its error keeps the message back.
func TestRunBeforeSend(t *testing.T) {
	tr := transport.NewMemory()
	m := newMailer(t, tr, postroom.Options{})
	errFull := errors.New("journal full")
	call := smallCall("a@example.com", "b@example.com")
	var mu sync.Mutex
	ids := map[int]string{}
	results, err := m.Run(context.Background(), postroom.OpSend, call, postroom.RunOptions{
		BeforeSend: func(ctx context.Context, i int, sendID string) error {
			mu.Lock()
			defer mu.Unlock()
			if _, sent := tr.Envelope(sendID); sent {
				t.Errorf("recipient %d: transport had its message before BeforeSend", i)
			}
			ids[i] = sendID
			if i == 1 {
				return errFull
			}
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if results[0].Status != postroom.StatusSent || results[0].SendID != ids[0] {
		t.Errorf("recipient 0: %+v (BeforeSend saw %q)", results[0], ids[0])
	}
	r := results[1]
	if r.Status != postroom.StatusDeferred || r.Code != postroom.ReasonNotSent || !errors.Is(r.Err, errFull) || r.SendID != ids[1] {
		t.Errorf("recipient 1: %+v, want deferred not-sent wrapping the hook's error", r)
	}
	if _, sent := tr.Envelope(ids[1]); sent || tr.Len() != 1 {
		t.Errorf("transport got %d messages; the kept-back one sent: %v", tr.Len(), sent)
	}
}

func TestRunUnknownOperation(t *testing.T) {
	m := newMailer(t, transport.NewMemory(), postroom.Options{})
	if _, err := m.Run(context.Background(), postroom.Operation(7), smallCall("a@example.com"), postroom.RunOptions{}); err == nil {
		t.Fatal("Run accepted an unknown operation")
	}
	if got := postroom.OpSendTemplate.String(); got != "message.send_template" {
		t.Errorf("OpSendTemplate.String() = %q", got)
	}
}

// TestTransportPanic checks that a Transport's panic reaches the caller of
// Send, on its goroutine, with every worker ended, whichever recipient
// panics: also the call's first, which holds the whole in-flight budget
// (inflight.go) while it runs, so that a worker holding its weight through
// a panic would leave the others waiting for it forever.
func TestTransportPanic(t *testing.T) {
	for _, at := range []string{"a@example.com", "c@example.com"} {
		t.Run(at, func(t *testing.T) {
			m := newMailer(t, postroom.TransportFunc(func(_ context.Context, e *postroom.Envelope) error {
				if e.To[0] == at {
					panic("transport bug")
				}
				return nil
			}), postroom.Options{Concurrency: 4})
			call := smallCall("a@example.com", "b@example.com", "c@example.com", "d@example.com", "e@example.com", "f@example.com")
			done := make(chan any, 1)
			go func() {
				defer func() { done <- recover() }()
				_, _ = m.Send(context.Background(), call)
			}()
			select {
			case p := <-done:
				if p != "transport bug" {
					t.Fatalf("Send recovered %v, want the transport's panic", p)
				}
			case <-time.After(time.Minute):
				t.Fatal("Send has not returned a minute after a transport panicked: its workers wait for one another")
			}
		})
	}
}

// TestSmallMessagesInParallel checks that once the call's first message
// has given the size of its messages (inflight.go), small messages are
// handed over Concurrency at a time: four recipients wait in the
// transport until all four are there, which they never are when the
// workers that waited for the first recipient go one by one.
func TestSmallMessagesInParallel(t *testing.T) {
	const together = 4
	var mu sync.Mutex
	arrived, all := 0, make(chan struct{})
	first := true
	m := newMailer(t, postroom.TransportFunc(func(ctx context.Context, e *postroom.Envelope) error {
		mu.Lock()
		if first { // the probe: runs alone
			first = false
			mu.Unlock()
			return nil
		}
		if arrived++; arrived == together {
			close(all)
		}
		mu.Unlock()
		select {
		case <-all:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}), postroom.Options{Concurrency: together})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	results, err := m.Send(ctx, smallCall("a@example.com", "b@example.com", "c@example.com", "d@example.com", "e@example.com"))
	if err != nil {
		t.Fatalf("Send: %v (the messages after the first were not handed over %d at a time)", err, together)
	}
	for _, r := range results {
		if r.Status != postroom.StatusSent {
			t.Errorf("%s: %s %s", r.Email, r.Status, r.Reason)
		}
	}
}
