package inbound_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/postroom/postroom/inbound"
)

// TestCommandLineBound: a command line that never ends, sent at once or
// trickled, parseable or not, is answered 421 4.4.2 and closed within
// ReadTimeout; the half line is never run (no 501 for "MAIL FROM:<", no
// 250 for "NOOP xxx").
func TestCommandLineBound(t *testing.T) {
	const bound = 500 * time.Millisecond
	h := newHostile(t, false, func(o *inbound.Options) { o.ReadTimeout = bound })
	want := "421 4.4.2 " + bounceDomain + " Error: timeout exceeded"
	for _, tc := range []struct {
		name, line string
		gap        time.Duration // 0: at once
	}{
		{"at once", "MAIL FROM:<", 0},
		{"trickled", "MAIL FROM:<", bound / 5},
		{"parseable trickled", "NOOP xxx", bound / 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := dialRaw(t, h.addr, "")
			r.greeted()
			start := time.Now()
			if tc.gap == 0 {
				r.write(tc.line)
			} else {
				defer trickle(r, tc.line, tc.gap)()
			}
			replies, closed := r.closedWithin(bound + slack)
			if !closed {
				t.Fatalf("still open %v after the line began (bound %v)", time.Since(start), bound)
			}
			if len(replies) != 1 || replies[0] != want {
				t.Errorf("replies %q, want only %q", replies, want)
			}
		})
	}
	if n := h.log.count("inbound: session ended by the server"); n != 3 {
		t.Errorf("%d sessions ended logged, want 3", n)
	}
}

// TestJunkCommands: more than MaxJunkCommands commands that carry no
// mail are answered 421 4.7.0 and the connection closed; a message taken
// starts the count again (Postfix's smtpd_junk_command_limit).
func TestJunkCommands(t *testing.T) {
	h := newHostile(t, false, func(o *inbound.Options) { o.MaxJunkCommands = 5 })
	id := h.send("ann@example.net")
	msg := dsn(verp.Address(id), "ann@example.net", "failed", "5.1.1", "550 5.1.1 User unknown")
	r := dialRaw(t, h.addr, "")
	r.greeted()
	cmd := func(line string, want int) {
		t.Helper()
		r.write(line + "\r\n")
		if c, l, err := r.reply(10 * time.Second); err != nil || c != want {
			t.Fatalf("%s: reply %d %q, %v; want %d", line, c, l, err, want)
		}
	}
	cmd("EHLO mta.example.org", 250) // junk 1, as Postfix counts it
	for range 4 {
		cmd("NOOP", 250)
	}
	cmd("MAIL FROM:<>", 250)
	cmd("RCPT TO:<"+verp.Address(id)+">", 250)
	cmd("DATA", 354)
	cmd(strings.TrimSuffix(msg, "\r\n")+"\r\n.", 250) // taken: the count starts again
	for range 5 {
		cmd("NOOP", 250)
	}
	r.write("NOOP\r\n")
	replies, closed := r.closedWithin(10 * time.Second)
	if want := "421 4.7.0 " + bounceDomain + " Error: too many junk commands"; !closed || len(replies) != 1 || replies[0] != want {
		t.Errorf("after junk: replies %q, closed %v; want %q and closed", replies, closed, want)
	}
}

// TestSessionTime: a client busy with commands that each come in time is
// still answered 421 4.4.2 and closed at MaxSessionTime.
func TestSessionTime(t *testing.T) {
	const bound = time.Second
	h := newHostile(t, false, func(o *inbound.Options) {
		o.MaxSessionTime = bound
		o.MaxJunkCommands = 1 << 20
	})
	r := dialRaw(t, h.addr, "")
	start := time.Now()
	r.greeted()
	defer trickle(r, "NOOP\r\n", 20*time.Millisecond)()
	var last string
	for {
		c, l, err := r.reply(bound + slack)
		if err != nil {
			break
		}
		if c != 250 {
			last = l
		}
	}
	if d := time.Since(start); d > bound+slack {
		t.Errorf("closed after %v, bound %v", d, bound)
	}
	if want := "421 4.4.2 " + bounceDomain + " Error: session time limit exceeded"; last != want {
		t.Errorf("last reply %q, want %q", last, want)
	}
}

// TestLongLines: a DSN with a line of 5,000 octets sent by DATA or BDAT
// is taken and acted on (Postfix takes such lines); a command line longer than
// 2,048 octets ends the session (Postfix's line_length_limit).
func TestLongLines(t *testing.T) {
	h := newHostile(t, false, nil)
	id := h.send("ann@example.net")
	diag := "550 5.1.1 User unknown " + strings.Repeat("x", 5000)
	err := deliver(t, h.addr, strings.NewReader(dsn(verp.Address(id), "ann@example.net", "failed", "5.1.1", diag)), verp.Address(id))
	if c, _ := code(t, err); c != 250 {
		t.Fatalf("reply %v, want 250", err)
	}
	if got := h.listed(t, "ann@example.net"); got != "hard-bounce" {
		t.Errorf("listed as %q, want hard-bounce", got)
	}

	// The same by BDAT, the chunk sent with its command.
	bob := h.send("bob@example.net")
	msg := dsn(verp.Address(bob), "bob@example.net", "failed", "5.1.1", diag)
	r := dialRaw(t, h.addr, "")
	r.greeted()
	r.write("EHLO mta.example.org\r\nMAIL FROM:<>\r\nRCPT TO:<" + verp.Address(bob) + ">\r\n" +
		fmt.Sprintf("BDAT %d LAST\r\n", len(msg)) + msg)
	for _, want := range []int{250, 250, 250, 250} {
		if c, l, err := r.reply(10 * time.Second); err != nil || c != want {
			t.Fatalf("BDAT: reply %d %q, %v; want %d", c, l, err, want)
		}
	}
	if got := h.listed(t, "bob@example.net"); got != "hard-bounce" {
		t.Errorf("bob listed as %q, want hard-bounce", got)
	}

	r.write("NOOP " + strings.Repeat("x", 2000) + "\r\n")
	if c, l, err := r.reply(10 * time.Second); err != nil || c != 250 {
		t.Fatalf("a 2,007-octet command line: %d %q, %v", c, l, err)
	}
	r.write("NOOP " + strings.Repeat("x", 2100) + "\r\n")
	replies, closed := r.closedWithin(10 * time.Second)
	if want := "500 5.5.2 " + bounceDomain + " Error: command line too long"; !closed || len(replies) != 1 || replies[0] != want {
		t.Errorf("replies %q, closed %v; want %q and closed", replies, closed, want)
	}
}

// TestBDATTimeoutReply: a BDAT chunk cut by the timeout is answered with
// a fixed text, not the socket error (which named both addresses).
func TestBDATTimeoutReply(t *testing.T) {
	h := newHostile(t, false, func(o *inbound.Options) { o.ReadTimeout = 500 * time.Millisecond })
	id := h.send("ann@example.net")
	r := dialRaw(t, h.addr, "")
	r.greeted()
	r.write("EHLO mta.example.org\r\nMAIL FROM:<>\r\nRCPT TO:<" + verp.Address(id) + ">\r\nBDAT 10\r\n12345")
	replies, closed := r.closedWithin(10 * time.Second)
	if !closed {
		t.Fatal("not closed")
	}
	want := "421 4.4.2 " + bounceDomain + " Error: timeout exceeded"
	if n := len(replies); n == 0 || replies[n-1] != want {
		t.Errorf("replies %q, want the last %q", replies, want)
	}
	for _, l := range replies {
		for _, a := range []string{r.c.LocalAddr().String(), r.c.RemoteAddr().String(), "127.0.0.1"} {
			if strings.Contains(l, a) {
				t.Errorf("reply %q names an address", l)
			}
		}
	}
}

// TestCommandLineBoundTLS: after STARTTLS a command line that never ends
// is bounded by ReadTimeout too; the session is closed without a reply
// (the half line is not answered).
func TestCommandLineBoundTLS(t *testing.T) {
	const bound = 500 * time.Millisecond
	h, cfg := newHostileTLS(t, false, func(o *inbound.Options) { o.ReadTimeout = bound })
	s := dialRaw(t, h.addr, "").startTLS("EHLO", cfg)
	start := time.Now()
	s.write("MAIL FROM:<")
	replies, closed := s.closedWithin(bound + slack)
	if !closed {
		t.Fatalf("still open %v after the line began (bound %v)", time.Since(start), bound)
	}
	if len(replies) != 0 {
		t.Errorf("replies %q to a half line", replies)
	}
}
