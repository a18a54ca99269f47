package inbound_test

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

// TestBDATResetRace: the input of §5 (a BDAT chunk, then RSET and a new
// transaction with two recipients, in one write) made go-smtp's BDAT
// goroutine report the new transaction's recipients to the old one (an
// LMTP panic). A BDAT transfer reset, and an empty first chunk (which
// made go-smtp's goroutine panic after QUIT), now end the session
// (go-smtp answers a later transaction with the reset one's result:
// TestBDATTransactionsApart); nothing panics and no one is listed.
func TestBDATResetRace(t *testing.T) {
	for _, lmtp := range []bool{true, false} {
		for _, tc := range []struct {
			chunk string
			last  int // the reply that ends the session
		}{
			{"BDAT 10\r\n0123456789", 421},
			{"BDAT 0\r\n", 500},
		} {
			proto := map[bool]string{true: "LMTP", false: "SMTP"}[lmtp]
			t.Run(fmt.Sprintf("%s/%q", proto, tc.chunk), func(t *testing.T) {
				h := newHostile(t, lmtp, nil)
				a, b, c := h.send("a@example.net"), h.send("b@example.net"), h.send("c@example.net")
				hello := map[bool]string{true: "LHLO", false: "EHLO"}[lmtp]
				input := hello + " mta.example.org\r\nMAIL FROM:<>\r\nRCPT TO:<" + verp.Address(a) + ">\r\n" +
					tc.chunk +
					"RSET\r\nMAIL FROM:<>\r\nRCPT TO:<" + verp.Address(b) + ">\r\nRCPT TO:<" + verp.Address(c) + ">\r\nQUIT\r\n"
				var wg sync.WaitGroup
				for range 8 {
					wg.Go(func() {
						for range 25 {
							r := dialRaw(t, h.addr, "")
							r.write(input)
							if got := r.codes(10 * time.Second); !endedWith(got, 5, tc.last) {
								t.Errorf("replies %v, want 220, at most 4 250, %d", got, tc.last)
								return
							}
							r.c.Close()
						}
					})
				}
				wg.Wait()
				if n := h.log.panics(); n != 0 {
					t.Errorf("%d panics logged; the first:\n%s", n, h.log.detail("inbound: smtp server: panic serving"))
				}
				for _, e := range []string{"a@example.net", "b@example.net", "c@example.net"} {
					if r := h.listed(t, e); r != "" {
						t.Errorf("%s listed as %q", e, r)
					}
				}
			})
		}
	}
}

// endedWith says whether codes are a greeting, at most max-1 replies 250
// (to commands run before the session was ended; the input may come in
// pieces) and last.
func endedWith(codes []int, max, last int) bool {
	n := len(codes)
	if n < 2 || n > max+1 || codes[0] != 220 || codes[n-1] != last {
		return false
	}
	for _, c := range codes[1 : n-1] {
		if c != 250 {
			return false
		}
	}
	return true
}

// TestBDATTransactionsApart: a whole report sent as a first BDAT chunk,
// then RSET and a second transaction with its own report, in one write.
// go-smtp answered the second transaction with the first one's result
// (451: its read was cut by the reset) although it took the second
// message, and its sender would send it again. The session now ends at
// the RSET: neither report is acted on, and the second one, sent again
// in a new session, is.
func TestBDATTransactionsApart(t *testing.T) {
	for _, lmtp := range []bool{true, false} {
		t.Run(map[bool]string{true: "LMTP", false: "SMTP"}[lmtp], func(t *testing.T) {
			h := newHostile(t, lmtp, nil)
			hello := map[bool]string{true: "LHLO", false: "EHLO"}[lmtp]
			for i := range 20 {
				a, b := fmt.Sprintf("a%d@example.net", i), fmt.Sprintf("b%d@example.net", i)
				ida, idb := h.send(a), h.send(b)
				ma := dsn(verp.Address(ida), a, "failed", "5.1.1", "550 5.1.1 User unknown")
				mb := dsn(verp.Address(idb), b, "failed", "5.1.1", "550 5.1.1 User unknown")
				second := "MAIL FROM:<>\r\nRCPT TO:<" + verp.Address(idb) + ">\r\n" +
					fmt.Sprintf("BDAT %d LAST\r\n", len(mb)) + mb + "QUIT\r\n"
				r := dialRaw(t, h.addr, "")
				r.write(hello + " mta.example.org\r\nMAIL FROM:<>\r\nRCPT TO:<" + verp.Address(ida) + ">\r\n" +
					fmt.Sprintf("BDAT %d\r\n", len(ma)) + ma + "RSET\r\n" + second)
				if got := r.codes(10 * time.Second); !endedWith(got, 5, 421) {
					t.Fatalf("replies %v, want 220, at most 4 250, 421", got)
				}
				for _, e := range []string{a, b} {
					if got := h.listed(t, e); got != "" {
						t.Errorf("%s listed as %q by a session ended before its message", e, got)
					}
				}
				r = dialRaw(t, h.addr, "")
				r.write(hello + " mta.example.org\r\n" + second)
				if got, want := r.codes(10*time.Second), []int{220, 250, 250, 250, 250, 221}; !equalCodes(got, want) {
					t.Fatalf("sent again: replies %v, want %v", got, want)
				}
				if got := h.listed(t, b); got != "hard-bounce" {
					t.Errorf("%s listed as %q, want hard-bounce", b, got)
				}
			}
			if n := h.log.panics(); n != 0 {
				t.Errorf("%d panics logged", n)
			}
		})
	}
}

// TestBDATRcptBetweenChunks: RCPT between two BDAT chunks is refused
// (by go-smtp), and the message goes to the recipients given before its
// first chunk, with one reply each.
func TestBDATRcptBetweenChunks(t *testing.T) {
	h := newHostile(t, true, nil)
	a, b := h.send("a@example.net"), h.send("b@example.net")
	msg := dsn(verp.Address(a), "a@example.net", "failed", "5.1.1", "550 5.1.1 User unknown")
	r := dialRaw(t, h.addr, "")
	r.write("LHLO mta.example.org\r\nMAIL FROM:<>\r\nRCPT TO:<" + verp.Address(a) + ">\r\n" +
		"BDAT 10\r\n" + msg[:10] + "RCPT TO:<" + verp.Address(b) + ">\r\n" +
		fmt.Sprintf("BDAT %d LAST\r\n", len(msg)-10) + msg[10:] + "QUIT\r\n")
	want := []int{220, 250, 250, 250, 250, 502, 250, 221}
	if got := r.codes(10 * time.Second); !equalCodes(got, want) {
		t.Errorf("replies %v, want %v", got, want)
	}
	if n := h.log.panics(); n != 0 {
		t.Errorf("%d panics logged; the first:\n%s", n, h.log.detail("inbound: smtp server: panic serving"))
	}
	if got := h.listed(t, "a@example.net"); got != "hard-bounce" {
		t.Errorf("a listed as %q, want hard-bounce", got)
	}
	if got := h.listed(t, "b@example.net"); got != "" {
		t.Errorf("b, refused between chunks, listed as %q", got)
	}
}

// TestBDATResetTLS: after STARTTLS, where the commands cannot be
// followed, a BDAT transfer reset still ends the session (from the
// session's Reset), and the second transaction is not answered with the
// first one's result.
func TestBDATResetTLS(t *testing.T) {
	for _, lmtp := range []bool{true, false} {
		t.Run(map[bool]string{true: "LMTP", false: "SMTP"}[lmtp], func(t *testing.T) {
			h, cfg := newHostileTLS(t, lmtp, nil)
			hello := map[bool]string{true: "LHLO", false: "EHLO"}[lmtp]
			for i := range 10 {
				a, b := fmt.Sprintf("a%d@example.net", i), fmt.Sprintf("b%d@example.net", i)
				ida, idb := h.send(a), h.send(b)
				ma := dsn(verp.Address(ida), a, "failed", "5.1.1", "550 5.1.1 User unknown")
				mb := dsn(verp.Address(idb), b, "failed", "5.1.1", "550 5.1.1 User unknown")
				s := dialRaw(t, h.addr, "").startTLS(hello, cfg)
				s.write("MAIL FROM:<>\r\nRCPT TO:<" + verp.Address(ida) + ">\r\n" +
					fmt.Sprintf("BDAT %d\r\n", len(ma)) + ma + "RSET\r\n" +
					"MAIL FROM:<>\r\nRCPT TO:<" + verp.Address(idb) + ">\r\n" +
					fmt.Sprintf("BDAT %d LAST\r\n", len(mb)) + mb + "QUIT\r\n")
				got := s.codes(10 * time.Second)
				for i, c := range got {
					if c != 250 || i > 2 {
						t.Fatalf("replies %v, want at most MAIL's, RCPT's and the chunk's 250 before the end", got)
					}
				}
				if got := h.listed(t, a); got != "" {
					t.Errorf("%s, whose message never ended, listed as %q", a, got)
				}
			}
			if n := h.log.panics(); n != 0 {
				t.Errorf("%d panics logged", n)
			}
		})
	}
}
