package inbound_test

import (
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-smtp"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/events"
)

// watchedSends is a Sends that counts its lookups and calls onMiss, once,
// from the first lookup that finds no send: the moment the Receiver has
// read a report whose send is not recorded yet.
type watchedSends struct {
	events.Sends
	onMiss func()

	once      sync.Once
	mu        sync.Mutex
	lookups   int
	misses    int
	firstMiss time.Time
}

func (w *watchedSends) Lookup(ctx context.Context, id string) (events.Send, bool, error) {
	snd, ok, err := w.Sends.Lookup(ctx, id)
	miss := !ok && err == nil
	w.mu.Lock()
	w.lookups++
	if miss {
		w.misses++
		if w.firstMiss.IsZero() {
			w.firstMiss = time.Now()
		}
	}
	w.mu.Unlock()
	if miss && w.onMiss != nil {
		w.once.Do(w.onMiss)
	}
	return snd, ok, err
}

func (w *watchedSends) counts() (lookups, misses int, firstMiss time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.lookups, w.misses, w.firstMiss
}

// TestSendWait: a bounce that arrives over SMTP before its send is
// recorded (a local relay answers within milliseconds, the Recorder
// writes later) is taken at its first delivery once the send is written
// 300 ms later: 250, the address listed, no 451. A bounce for a send id
// that nobody handed over is still never acted on: after the wait, 451
// within the grace, then taken and dropped.
func TestSendWait(t *testing.T) {
	t.Run("recorded 300 ms after the report arrives", func(t *testing.T) {
		mem, err := events.NewMemory(events.MemoryOptions{})
		if err != nil {
			t.Fatal(err)
		}
		dead, id := "dead@example.net", newSendID()
		const late = 300 * time.Millisecond
		var recordedAt time.Time
		var recMu sync.Mutex
		ws := &watchedSends{Sends: mem}
		ws.onMiss = func() {
			time.AfterFunc(late, func() {
				mem.OnEvent(context.Background(), postroom.Event{Type: postroom.EventSend, SendID: id, AccountID: account, Email: dead})
				recMu.Lock()
				recordedAt = time.Now()
				recMu.Unlock()
			})
		}
		// A wait far longer than needed: it ends when the send is found,
		// so a loaded machine does not turn this into a 451.
		f := newFixture(t, fixtureOptions{sends: ws, sendWait: time.Minute})
		msg := dsn(verp.Address(id), dead, "failed", "5.1.1", "550 5.1.1 <dead@example.net>: User unknown")
		err = deliver(t, f.addr, strings.NewReader(msg), verp.Address(id))
		replied := time.Now()
		if c, e := code(t, err); c != 250 {
			t.Fatalf("first delivery: %v (%d %v), want 250: taken at once", err, c, e)
		}
		lookups, misses, firstMiss := ws.counts()
		if misses == 0 {
			t.Fatalf("the send was found at the first lookup: the test did not deliver the bounce before its send was recorded")
		}
		if r := f.listed(t, dead); r != postroom.ReasonHardBounce {
			t.Errorf("after the first delivery %s listed as %q, want hard-bounce", dead, r)
		}
		f.lastEvent(t, postroom.EventHardBounce, dead, id)
		recMu.Lock()
		rec := recordedAt
		recMu.Unlock()
		t.Logf("report read to listed: %v; send recorded %v after the report, found %v after it was recorded; %d lookups",
			replied.Sub(firstMiss).Round(time.Millisecond), rec.Sub(firstMiss).Round(time.Millisecond), replied.Sub(rec).Round(time.Millisecond), lookups)
	})

	t.Run("never recorded", func(t *testing.T) {
		mem, err := events.NewMemory(events.MemoryOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ws := &watchedSends{Sends: mem}
		var mu sync.Mutex
		now := time.Now()
		clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
		const wait = 200 * time.Millisecond
		f := newFixture(t, fixtureOptions{sends: ws, sendWait: wait, now: clock})
		dead, id := "dead@example.net", newSendID()
		msg := dsn(verp.Address(id), dead, "failed", "5.1.1", "550 5.1.1 <dead@example.net>: User unknown")

		start := time.Now()
		err = deliver(t, f.addr, strings.NewReader(msg), verp.Address(id))
		if c, e := code(t, err); c != 451 || e != (smtp.EnhancedCode{4, 3, 0}) {
			t.Fatalf("first delivery: %v, want 451 4.3.0 after the wait", err)
		}
		if took := time.Since(start); took < wait {
			t.Errorf("answered after %v, before the wait of %v was over", took, wait)
		}
		first, _, _ := ws.counts()
		if first < 2 {
			t.Errorf("%d lookups; want the send looked up again during the wait", first)
		}
		// Within the grace: asked again, without a second wait.
		err = deliver(t, f.addr, strings.NewReader(msg), verp.Address(id))
		if c, _ := code(t, err); c != 451 {
			t.Fatalf("second delivery: %v, want 451", err)
		}
		if n, _, _ := ws.counts(); n != first+1 {
			t.Errorf("second delivery: %d lookups, want 1 (no second wait)", n-first)
		}
		// After the grace: taken and dropped.
		mu.Lock()
		now = now.Add(11 * time.Minute)
		mu.Unlock()
		err = deliver(t, f.addr, strings.NewReader(msg), verp.Address(id))
		if c, _ := code(t, err); c != 250 {
			t.Fatalf("after the grace: %v, want 250 (dropped)", err)
		}
		if r := f.listed(t, dead); r != "" || len(f.eventTypes()) != 0 {
			t.Errorf("a send id never handed over listed %s as %q and emitted %v; want nothing", dead, r, f.eventTypes())
		}
	})
}

// deliverErr is deliver for another goroutine than the test's: every
// error is returned, none fails the test.
func deliverErr(addr, msg string, rcpts ...string) error {
	c, err := smtp.Dial(addr)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.Hello("mta.example.org"); err != nil {
		return err
	}
	if err := c.Mail("", nil); err != nil {
		return err
	}
	for _, r := range rcpts {
		if err := c.Rcpt(r, nil); err != nil {
			return err
		}
	}
	w, err := c.Data()
	if err != nil {
		return err
	}
	if _, err := io.WriteString(w, msg); err != nil {
		return err
	}
	err = w.Close()
	c.Quit()
	return err
}
