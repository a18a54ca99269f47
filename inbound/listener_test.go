package inbound_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/postroom/postroom/inbound"
)

// TestIdleConnectionsLeaveRoom: 100 idle connections from one address
// (the default MaxConnections) take half the slots
// (MaxConnectionsPerClient; the rest are refused 421 4.7.0 at once), and
// a bounce from another address is greeted and taken meanwhile.
func TestIdleConnectionsLeaveRoom(t *testing.T) {
	h := newHostile(t, false, nil)
	var greeted, refused int
	for range inbound.DefaultMaxConnections {
		r := dialRaw(t, h.addr, "127.0.0.1")
		c, l, err := r.reply(10 * time.Second)
		switch {
		case err == nil && c == 220:
			greeted++
		case err == nil && l == "421 4.7.0 "+bounceDomain+" Error: too many connections from your address":
			refused++
			if _, closed := r.closedWithin(10 * time.Second); !closed {
				t.Error("a refused connection was left open")
			}
		default:
			t.Fatalf("reply %d %q, %v", c, l, err)
		}
	}
	if want := inbound.DefaultMaxConnections / 2; greeted != want || refused != want {
		t.Errorf("%d greeted, %d refused; want %d each", greeted, refused, want)
	}

	id := h.send("ann@example.net")
	start := time.Now()
	r := dialRaw(t, h.addr, "127.0.0.2")
	r.greeted()
	if d := time.Since(start); d > time.Second+slack {
		t.Errorf("greeted after %v", d)
	}
	bounceOver(t, h, r, id, "ann@example.net")
}

// TestStressTimeout: when four fifths of MaxConnections are open, the
// idle ones wait StressReadTimeout, not ReadTimeout (Postfix's
// smtpd_timeout = ${stress?{10}:{300}}s), and are closed 421 4.4.2.
func TestStressTimeout(t *testing.T) {
	const stress = 300 * time.Millisecond
	h := newHostile(t, false, func(o *inbound.Options) {
		o.MaxConnections = 10
		o.MaxConnectionsPerClient = 10
		o.ReadTimeout = time.Minute
		o.StressReadTimeout = stress
	})
	var rs []*raw
	for range 7 {
		r := dialRaw(t, h.addr, "")
		r.greeted()
		rs = append(rs, r)
	}
	// Below stress: still open after more than StressReadTimeout.
	time.Sleep(3 * stress)
	for i, r := range rs {
		r.write("NOOP\r\n")
		if c, l, err := r.reply(10 * time.Second); err != nil || c != 250 {
			t.Fatalf("connection %d below stress: reply %d %q, %v", i, c, l, err)
		}
	}
	r := dialRaw(t, h.addr, "")
	r.greeted()
	rs = append(rs, r)
	start := time.Now()
	for i, r := range rs {
		replies, closed := r.closedWithin(stress + slack)
		if !closed {
			t.Fatalf("connection %d open %v into stress", i, time.Since(start))
		}
		if want := "421 4.4.2 " + bounceDomain + " Error: timeout exceeded"; len(replies) != 1 || replies[0] != want {
			t.Errorf("connection %d: replies %q, want %q", i, replies, want)
		}
	}
}

// TestIdleConnectionsMakeRoom: every slot taken by idle connections from
// as many addresses (no per-client limit applies), a new client is
// greeted within a second or so all the same: the connection that has
// waited longest for its next command gives up its slot (421 4.4.2), the
// others stay open, and the new client's bounce is taken.
func TestIdleConnectionsMakeRoom(t *testing.T) {
	const slots = 4
	h := newHostile(t, false, func(o *inbound.Options) {
		o.MaxConnections = slots
		o.MaxConnectionsPerClient = 1
		o.ReadTimeout = time.Minute
		o.StressReadTimeout = time.Minute
	})
	var idle []*raw
	for i := range slots {
		r := dialRaw(t, h.addr, fmt.Sprintf("127.0.0.%d", 2+i))
		r.greeted()
		idle = append(idle, r)
		time.Sleep(50 * time.Millisecond) // the first waited longest
	}
	time.Sleep(1500 * time.Millisecond) // past evictIdle

	id := h.send("ann@example.net")
	start := time.Now()
	r := dialRaw(t, h.addr, "127.0.0.9")
	r.greeted()
	if d := time.Since(start); d > time.Second+slack {
		t.Errorf("greeted after %v", d)
	}
	replies, closed := idle[0].closedWithin(slack)
	if want := "421 4.4.2 " + bounceDomain + " Error: timeout exceeded"; !closed || len(replies) != 1 || replies[0] != want {
		t.Errorf("the connection idle longest: closed %v, replies %q; want %q", closed, replies, want)
	}
	for i, o := range idle[1:] {
		o.write("NOOP\r\n")
		if c, l, err := o.reply(10 * time.Second); err != nil || c != 250 {
			t.Errorf("idle connection %d: reply %d %q, %v; want it still open", i+1, c, l, err)
		}
	}
	bounceOver(t, h, r, id, "ann@example.net")
}

// bounceOver delivers over r, a greeted connection to h, a DSN saying
// that the message of send id to addr bounced 5.1.1, and checks that it
// is taken (250) and addr listed hard-bounce.
func bounceOver(t *testing.T, h *hostile, r *raw, id, addr string) {
	t.Helper()
	r.write("EHLO mta.example.org\r\nMAIL FROM:<>\r\nRCPT TO:<" + verp.Address(id) + ">\r\nDATA\r\n")
	for _, want := range []int{250, 250, 250, 354} {
		if c, l, err := r.reply(10 * time.Second); err != nil || c != want {
			t.Fatalf("reply %d %q, %v; want %d", c, l, err, want)
		}
	}
	r.write(dsn(verp.Address(id), addr, "failed", "5.1.1", "550 5.1.1 User unknown") + ".\r\n")
	if c, l, err := r.reply(10 * time.Second); err != nil || c != 250 {
		t.Fatalf("reply to the message %d %q, %v", c, l, err)
	}
	if got := h.listed(t, addr); got != "hard-bounce" {
		t.Errorf("listed as %q, want hard-bounce", got)
	}
}
