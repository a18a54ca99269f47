package inbound

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/bounce"
	"github.com/postroom/postroom/events"
)

// stubSends is a Sends whose records the test writes, counting lookups.
type stubSends struct {
	mu      sync.Mutex
	sends   map[string]events.Send
	lookups map[string]int
}

func newStubSends() *stubSends {
	return &stubSends{sends: map[string]events.Send{}, lookups: map[string]int{}}
}

func (s *stubSends) Lookup(_ context.Context, id string) (events.Send, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lookups[id]++
	snd, ok := s.sends[id]
	return snd, ok, nil
}

func (s *stubSends) record(id, email string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sends[id] = events.Send{ID: id, AccountID: "acct-1", Email: email}
}

func (s *stubSends) count(id string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lookups[id]
}

// hardBounce is a report of a hard bounce for email, as bounce.Parse
// gives it.
func hardBounce(email string) *message {
	return &message{rep: &bounce.Report{Type: bounce.TypeBounce, Recipients: []bounce.Recipient{
		{Address: email, Action: "failed", Status: "5.1.1", Hard: true, Class: "user-unknown"},
	}}}
}

func newWaitReceiver(t *testing.T, sends events.Sends, opts Options) *Receiver {
	t.Helper()
	opts.VERP = postroom.VERP{Domain: "bounce.example.com"}
	opts.Sends = sends
	opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	rc, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return rc
}

// TestAwaitSend checks the wait on a fake clock (testing/synctest): a
// send recorded during the wait is found at the next lookup and the
// report is proven; a send never recorded is waited for exactly SendWait,
// then asked again; the recipients of one message share one wait; a
// second report for an id seen unknown is not waited for; MaxSendWaits
// messages wait at once, the next is answered at once; ctx ends the wait.
func TestAwaitSend(t *testing.T) {
	const wait = 5 * time.Second
	id1, id2 := "00000000000000000000000000000001", "00000000000000000000000000000002"
	t.Run("recorded during the wait", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			sends := newStubSends()
			rc := newWaitReceiver(t, sends, Options{SendWait: wait})
			const after = 310 * time.Millisecond
			time.AfterFunc(after, func() { sends.record(id1, "gone@example.net") })
			start := time.Now()
			p, err := rc.prove(t.Context(), hardBounce("gone@example.net"), route{sendID: id1})
			took := time.Since(start)
			if err != nil || p.out.Verdict != VerdictRecorded || len(p.evs) != 1 {
				t.Fatalf("prove: %s, %v, %d events; want recorded, one event", p.out.Verdict, err, len(p.evs))
			}
			if took < after || took > after+maxPoll {
				t.Errorf("found %v after the report, the send %v: want within %v of it", took, after, maxPoll)
			}
		})
	})
	t.Run("never recorded", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			sends := newStubSends()
			rc := newWaitReceiver(t, sends, Options{SendWait: wait})
			start := time.Now()
			p, err := rc.prove(t.Context(), hardBounce("gone@example.net"), route{sendID: id1})
			if took := time.Since(start); err != nil || p.out.Verdict != VerdictRetryLater || took != wait {
				t.Fatalf("prove: %s, %v after %v; want retry-later after %v", p.out.Verdict, err, took, wait)
			}
			// 20, 40, 80, 160 ms, then every 250 ms, the last at the
			// deadline: a bounded number of lookups.
			if n := sends.count(id1); n < 10 || n > 30 {
				t.Errorf("%d lookups in the wait; want about 22", n)
			}
			// Its retry is not waited for: the send had minutes.
			before := sends.count(id1)
			start = time.Now()
			p, err = rc.prove(t.Context(), hardBounce("gone@example.net"), route{sendID: id1})
			if took := time.Since(start); err != nil || p.out.Verdict != VerdictRetryLater || took != 0 || sends.count(id1) != before+1 {
				t.Errorf("retry: %s, %v after %v with %d lookups; want retry-later at once, one lookup", p.out.Verdict, err, took, sends.count(id1)-before)
			}
		})
	})
	t.Run("one wait per message", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			rc := newWaitReceiver(t, newStubSends(), Options{SendWait: wait})
			m := hardBounce("gone@example.net")
			start := time.Now()
			for _, id := range []string{id1, id2} {
				if p, err := rc.prove(t.Context(), m, route{sendID: id}); err != nil || p.out.Verdict != VerdictRetryLater {
					t.Fatalf("%s: %s, %v; want retry-later", id, p.out.Verdict, err)
				}
			}
			if took := time.Since(start); took != wait {
				t.Errorf("two recipients of one message waited %v; want %v in all", took, wait)
			}
		})
	})
	t.Run("a message that proves nothing does not wait", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			rc := newWaitReceiver(t, newStubSends(), Options{SendWait: wait})
			m := &message{rep: &bounce.Report{Type: bounce.TypeAutoReply}}
			start := time.Now()
			p, err := rc.prove(t.Context(), m, route{sendID: id1})
			if took := time.Since(start); err != nil || p.out.Verdict != VerdictUnknownSend || took != 0 {
				t.Errorf("auto-reply: %s, %v after %v; want unknown-send at once", p.out.Verdict, err, took)
			}
		})
	})
	t.Run("MaxSendWaits", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			rc := newWaitReceiver(t, newStubSends(), Options{SendWait: wait, MaxSendWaits: 1})
			done := make(chan struct{})
			go func() {
				defer close(done)
				rc.prove(context.Background(), hardBounce("gone@example.net"), route{sendID: id1})
			}()
			synctest.Wait() // the first message waits
			start := time.Now()
			p, err := rc.prove(t.Context(), hardBounce("gone@example.net"), route{sendID: id2})
			if took := time.Since(start); err != nil || p.out.Verdict != VerdictRetryLater || took != 0 {
				t.Errorf("beyond MaxSendWaits: %s, %v after %v; want retry-later at once", p.out.Verdict, err, took)
			}
			<-done
		})
	})
	t.Run("off", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			rc := newWaitReceiver(t, newStubSends(), Options{SendWait: -1})
			start := time.Now()
			p, err := rc.prove(t.Context(), hardBounce("gone@example.net"), route{sendID: id1})
			if took := time.Since(start); err != nil || p.out.Verdict != VerdictRetryLater || took != 0 {
				t.Errorf("off: %s, %v after %v; want retry-later at once", p.out.Verdict, err, took)
			}
		})
	})
	t.Run("ctx ends the wait", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			sends := newStubSends()
			rc := newWaitReceiver(t, sends, Options{SendWait: wait})
			ctx, cancel := context.WithTimeout(t.Context(), time.Second)
			defer cancel()
			start := time.Now()
			_, err := rc.prove(ctx, hardBounce("gone@example.net"), route{sendID: id1})
			var se *StoreError
			if took := time.Since(start); !errors.As(err, &se) || !errors.Is(err, context.DeadlineExceeded) || took != time.Second {
				t.Fatalf("prove: %v after %v; want a *StoreError for the deadline after 1s", err, took)
			}
			// Not answered "try again later" yet: its next delivery waits.
			if rc.unknown.seen(id1) {
				t.Errorf("an id whose wait was cut short is remembered as unknown")
			}
		})
	})
}
