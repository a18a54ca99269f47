package transport_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/transport"
)

// scripted is a raw SMTP server on 127.0.0.1:0 that runs script on every
// connection it accepts, for servers go-smtp will not play: hostile or
// broken ones. It is closed in t.Cleanup, which waits for the scripts.
func scripted(t *testing.T, script func(c net.Conn, r *bufio.Reader)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Go(func() {
				defer c.Close()
				script(c, bufio.NewReader(c))
			})
		}
	})
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		for _, c := range conns {
			_ = c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return ln.Addr().String()
}

// stream writes prefix, then repeats line until 1 MiB (far beyond any
// reply bound) was written or the client hung up.
func stream(c net.Conn, prefix, line string) {
	if _, err := io.WriteString(c, prefix); err != nil {
		return
	}
	chunk := strings.Repeat(line, 16<<10/len(line)+1)
	for n := 0; n < 1<<20; n += len(chunk) {
		if _, err := io.WriteString(c, chunk); err != nil {
			return
		}
	}
}

// expect reads one command line and reports whether it starts with verb.
func expect(r *bufio.Reader, verb string) bool {
	line, err := r.ReadString('\n')
	return err == nil && strings.HasPrefix(strings.ToUpper(line), verb)
}

const ehloReply = "250-hostile\r\n250-PIPELINING\r\n250-8BITMIME\r\n250 CHUNKING\r\n"

// TestSMTPHostileReplies: a server that sends an endless reply (one
// endless line, endless lines, endless EHLO keywords, an endless 550)
// fails the connection with ErrReplyTooLong once a bound is passed; the
// client reads little more than the 64 KiB a reply may hold.
func TestSMTPHostileReplies(t *testing.T) {
	tests := []struct {
		name   string
		script func(c net.Conn, r *bufio.Reader)
	}{
		{"endless greeting line", func(c net.Conn, _ *bufio.Reader) {
			stream(c, "220 ", "x")
		}},
		{"endless multi-line greeting", func(c net.Conn, _ *bufio.Reader) {
			stream(c, "", "220-hostile\r\n")
		}},
		{"endless EHLO keywords", func(c net.Conn, r *bufio.Reader) {
			io.WriteString(c, "220 hostile\r\n")
			if expect(r, "EHLO") {
				stream(c, "250-hostile\r\n", "250-XKEYWORD "+strings.Repeat("p", 100)+"\r\n")
			}
		}},
		{"endless EHLO keyword line", func(c net.Conn, r *bufio.Reader) {
			io.WriteString(c, "220 hostile\r\n")
			if expect(r, "EHLO") {
				stream(c, "250-hostile\r\n250-X", "p")
			}
		}},
		{"endless 550 to MAIL", func(c net.Conn, r *bufio.Reader) {
			io.WriteString(c, "220 hostile\r\n")
			if expect(r, "EHLO") {
				io.WriteString(c, ehloReply)
				if expect(r, "MAIL") {
					stream(c, "", "550-5.7.1 no\r\n")
				}
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			socks := newSockets()
			tr, err := transport.NewSMTP(transport.SMTPOptions{Addr: scripted(t, tt.script), TLS: transport.NoTLS, Dial: socks.dial, Retry: transport.RetryPolicy{Attempts: 1}})
			if err != nil {
				t.Fatal(err)
			}
			defer tr.Close()
			err = tr.Send(t.Context(), envelope("a", rcpt(0)))
			if !errors.Is(err, transport.ErrReplyTooLong) {
				t.Fatalf("Send: %v, want ErrReplyTooLong", err)
			}
			deliveryError(t, err)
			// The bound, one buffer of read-ahead, the replies before.
			if n := socks.read.Load(); n > 64<<10+8<<10 {
				t.Errorf("the client read %d bytes, want at most about 64 KiB", n)
			}
		})
	}
}

// serveSMTP plays a minimal ESMTP server offering PIPELINING, 8BITMIME and
// CHUNKING: every command gets 250, and after each message (DATA or BDAT
// LAST) the server writes what endOfData returns for its recipient.
func serveSMTP(c net.Conn, r *bufio.Reader, endOfData func(rcpt string) []string) {
	if _, err := io.WriteString(c, "220 hostile ESMTP\r\n"); err != nil {
		return
	}
	var rcpt string
	reply := func(parts []string) bool {
		for _, p := range parts {
			if _, err := io.WriteString(c, p); err != nil {
				return false
			}
		}
		return true
	}
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		cmd := strings.ToUpper(strings.TrimSpace(line))
		switch {
		case strings.HasPrefix(cmd, "EHLO"):
			reply([]string{ehloReply})
		case strings.HasPrefix(cmd, "RCPT TO:<"):
			rcpt = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(line), "RCPT TO:<"), ">")
			reply([]string{"250 ok\r\n"})
		case cmd == "DATA":
			reply([]string{"354 go\r\n"})
			for {
				l, err := r.ReadString('\n')
				if err != nil {
					return
				}
				if l == ".\r\n" {
					break
				}
			}
			if !reply(endOfData(rcpt)) {
				return
			}
		case strings.HasPrefix(cmd, "BDAT "):
			f := strings.Fields(cmd)
			n, _ := strconv.Atoi(f[1])
			if _, err := io.CopyN(io.Discard, r, int64(n)); err != nil {
				return
			}
			if !reply(endOfData(rcpt)) {
				return
			}
		case cmd == "QUIT":
			reply([]string{"221 bye\r\n"})
			return
		default:
			reply([]string{"250 ok\r\n"})
		}
	}
}

// TestSMTPUnsolicitedReply: a server that sends a second 250 after the
// end-of-data reply for ok@ and refuses every other message must not get
// the next message reported sent on the strength of its own stray reply.
// Sent in the same write, the stray reply is seen at once and ok@'s outcome
// is Uncertain; sent on its own, it is found on the idle connection before
// the next transaction, which goes on a new connection.
func TestSMTPUnsolicitedReply(t *testing.T) {
	for _, chunking := range []bool{true, false} {
		for _, sameWrite := range []bool{true, false} {
			t.Run(fmt.Sprintf("chunking=%v/sameWrite=%v", chunking, sameWrite), func(t *testing.T) {
				sendStray, strayWritten := make(chan struct{}), make(chan struct{})
				addr := scripted(t, func(c net.Conn, r *bufio.Reader) {
					serveSMTP(c, r, func(rcpt string) []string {
						switch {
						case rcpt != "ok@example.org":
							return []string{"554 5.7.1 refused\r\n"}
						case sameWrite:
							return []string{"250 ok\r\n250 stray\r\n"}
						}
						io.WriteString(c, "250 ok\r\n")
						// The stray reply once the client has its 250,
						// written here, before strayWritten says so (a
						// deferred close ran before serveSMTP wrote the
						// lines returned). On loopback its bytes are in
						// the client's socket when Write returns.
						<-sendStray
						io.WriteString(c, "250 stray\r\n")
						close(strayWritten)
						return nil
					})
				})
				tr, err := transport.NewSMTP(transport.SMTPOptions{Addr: addr, TLS: transport.NoTLS, MaxConns: 1,
					DisableChunking: !chunking, Retry: transport.RetryPolicy{Attempts: 1}})
				if err != nil {
					t.Fatal(err)
				}
				defer tr.Close()
				err = tr.Send(t.Context(), envelope("a", "ok@example.org"))
				if sameWrite {
					if de := deliveryError(t, err); de.Kind != postroom.DeliveryUncertain || !errors.Is(err, transport.ErrUnexpectedReply) {
						t.Fatalf("Send to ok@: %v, want Uncertain with ErrUnexpectedReply", err)
					}
				} else {
					if err != nil {
						t.Fatalf("Send to ok@: %v", err)
					}
					close(sendStray)
					<-strayWritten
				}
				err = tr.Send(t.Context(), envelope("b", "refused@example.org"))
				if de := deliveryError(t, err); de.Kind != postroom.DeliveryPermanent || de.Code != 554 {
					t.Fatalf("Send to refused@: %v, want the server's 554", err)
				}
			})
		}
	}
}

// TestSMTPRefusesUnsafeInput: envelopes and messages that cannot go on the
// wire as they are fail with a permanent DeliveryError before the
// transport sends anything; the server sees no MAIL.
func TestSMTPRefusesUnsafeInput(t *testing.T) {
	long := strings.Repeat("x", 999)
	tests := []struct {
		name       string
		from, to   string
		data       string
		eightBit   bool // the server offers 8BITMIME
		wantCode   int
		wantEnhanc string
	}{
		{name: "NUL in RCPT", from: "s@example.org", to: "a\x00b@example.org", data: "x\r\n", wantEnhanc: "5.1.3"},
		{name: "TAB in MAIL", from: "s\t@example.org", to: "a@example.org", data: "x\r\n", wantEnhanc: "5.1.3"},
		{name: "DEL in RCPT", from: "s@example.org", to: "a\x7f@example.org", data: "x\r\n", wantEnhanc: "5.1.3"},
		{name: "ESC in RCPT", from: "s@example.org", to: "a\x1b@example.org", data: "x\r\n", wantEnhanc: "5.1.3"},
		{name: "line over 998", from: "s@example.org", to: "a@example.org", data: "a\r\n" + long + "\r\n", wantEnhanc: "5.6.0"},
		{name: "line over 998 with 8BITMIME", from: "s@example.org", to: "a@example.org", data: long, eightBit: true, wantEnhanc: "5.6.0"},
		{name: "bare LF makes no long line", from: "s@example.org", to: "a@example.org", data: long[:500] + "\n" + long[:500] + "\n"},
		{name: "8-bit without 8BITMIME", from: "s@example.org", to: "a@example.org", data: "caf\xc3\xa9\r\n", wantCode: 554, wantEnhanc: "5.6.3"},
		{name: "8-bit with 8BITMIME", from: "s@example.org", to: "a@example.org", data: "caf\xc3\xa9\r\n", eightBit: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			var mails int
			addr := scripted(t, func(c net.Conn, r *bufio.Reader) {
				io.WriteString(c, "220 strict\r\n")
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					cmd := strings.ToUpper(line)
					switch {
					case strings.HasPrefix(cmd, "EHLO"):
						if tt.eightBit {
							io.WriteString(c, "250-strict\r\n250 8BITMIME\r\n")
						} else {
							io.WriteString(c, "250 strict\r\n")
						}
					case strings.HasPrefix(cmd, "MAIL"):
						mu.Lock()
						mails++
						mu.Unlock()
						io.WriteString(c, "250 ok\r\n")
					case strings.HasPrefix(cmd, "DATA"):
						io.WriteString(c, "354 go\r\n")
						for {
							l, err := r.ReadString('\n')
							if err != nil || l == ".\r\n" {
								break
							}
						}
						io.WriteString(c, "250 ok\r\n")
					default:
						io.WriteString(c, "250 ok\r\n")
					}
				}
			})
			tr, err := transport.NewSMTP(transport.SMTPOptions{Addr: addr, TLS: transport.NoTLS, Retry: transport.RetryPolicy{Attempts: 1}})
			if err != nil {
				t.Fatal(err)
			}
			defer tr.Close()
			err = tr.Send(t.Context(), &postroom.Envelope{From: tt.from, To: []string{tt.to}, Data: []byte(tt.data)})
			mu.Lock()
			sentMail := mails > 0
			mu.Unlock()
			if tt.wantEnhanc == "" {
				if err != nil || !sentMail {
					t.Fatalf("Send: %v (MAIL sent: %v), want delivered", err, sentMail)
				}
				return
			}
			de := deliveryError(t, err)
			if de.Kind != postroom.DeliveryPermanent || de.Code != tt.wantCode || de.Enhanced != tt.wantEnhanc {
				t.Fatalf("Send: %+v, want permanent %d %s", de, tt.wantCode, tt.wantEnhanc)
			}
			if sentMail {
				t.Error("the server got MAIL")
			}
		})
	}
}
