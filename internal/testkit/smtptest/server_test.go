package smtptest

import (
	"bufio"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/textproto"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

const testMsg = "Subject: hi\r\n\r\n.leading dot\r\nbody\r\n"

// send delivers testMsg with go-smtp's client, the other implementation.
func send(t *testing.T, c *smtp.Client, from string, to ...string) error {
	t.Helper()
	if err := c.Mail(from, nil); err != nil {
		return err
	}
	for _, r := range to {
		if err := c.Rcpt(r, nil); err != nil {
			return err
		}
	}
	w, err := c.Data()
	if err != nil {
		return err
	}
	if _, err := io.WriteString(w, testMsg); err != nil {
		return err
	}
	return w.Close()
}

func dial(t *testing.T, s *Server) *smtp.Client {
	t.Helper()
	c, err := smtp.Dial(s.Addr())
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func smtpCode(err error) int {
	var se *smtp.SMTPError
	if errors.As(err, &se) {
		return se.Code
	}
	return 0
}

func TestServerFaults(t *testing.T) {
	tests := []struct {
		name     string
		fault    func(Command) Fault
		to       []string
		wantCode int  // the SMTP code send fails with; 0 for success
		wantNet  bool // send fails without a reply
		wantMsgs int
		wantCut  bool
	}{
		{name: "normal", to: []string{"a@example.org"}, wantMsgs: 1},
		{
			name:  "rcpt 550 for one address",
			fault: At(When{Stage: Rcpt, Addr: "bad@example.org"}, Fault{Code: 550, Enhanced: "5.1.1", Text: "no such user"}),
			to:    []string{"bad@example.org"}, wantCode: 550,
		},
		{
			name:  "mail 451",
			fault: At(When{Stage: Mail}, Fault{Code: 451}),
			to:    []string{"a@example.org"}, wantCode: 451,
		},
		{
			name:  "data 554",
			fault: At(When{Stage: Data, Addr: "a@example.org"}, Fault{Code: 554, Text: "no data today"}),
			to:    []string{"a@example.org"}, wantCode: 554,
		},
		{
			name:  "end of data 451",
			fault: At(When{Stage: EndOfData}, Fault{Code: 451}),
			to:    []string{"a@example.org"}, wantCode: 451,
		},
		{
			name:  "drop after the dot keeps the message, cut",
			fault: At(When{Stage: EndOfData}, Fault{Drop: true}),
			to:    []string{"a@example.org"}, wantNet: true, wantMsgs: 1, wantCut: true,
		},
		{
			name:  "drop mid body keeps nothing",
			fault: At(When{Stage: Body}, Fault{Drop: true}),
			to:    []string{"a@example.org"}, wantNet: true,
		},
		{
			name:  "rcpt 421 then close",
			fault: At(When{Stage: Rcpt}, Fault{Code: 421, Close: true}),
			to:    []string{"a@example.org"}, wantCode: 421,
		},
		{
			name:  "second attempt passes",
			fault: At(When{Stage: Rcpt, FirstAttempt: true}, Fault{Code: 450}),
			to:    []string{"a@example.org"}, wantCode: 450,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewServer(t, Options{Faults: tt.fault})
			c := dial(t, s)
			err := send(t, c, "from@example.org", tt.to...)
			switch {
			case tt.wantNet:
				if err == nil || smtpCode(err) != 0 {
					t.Fatalf("send: %v, want a network error", err)
				}
			case smtpCode(err) != tt.wantCode:
				t.Fatalf("send: %v, want code %d", err, tt.wantCode)
			}
			msgs := s.Messages()
			if len(msgs) != tt.wantMsgs {
				t.Fatalf("ledger has %d messages, want %d", len(msgs), tt.wantMsgs)
			}
			for _, m := range msgs {
				if m.Cut != tt.wantCut {
					t.Errorf("Cut = %v, want %v", m.Cut, tt.wantCut)
				}
				if string(m.Data) != testMsg || m.Size != len(testMsg) {
					t.Errorf("Data = %q (size %d), want %q", m.Data, m.Size, testMsg)
				}
			}
		})
	}
}

func TestServerGreeting(t *testing.T) {
	tests := []struct {
		name  string
		fault Fault
		code  int
	}{
		{"421", Fault{Code: 421, Text: "busy"}, 421},
		{"554", Fault{Code: 554, Text: "go away"}, 554},
		{"drop", Fault{Drop: true}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewServer(t, Options{Faults: At(When{Stage: Greeting}, tt.fault)})
			nc, err := net.Dial("tcp", s.Addr())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = nc.Close() })
			got, _ := bufio.NewReader(nc).ReadString('\n')
			if tt.code == 0 {
				if got != "" {
					t.Fatalf("greeting %q, want none", got)
				}
				return
			}
			if !strings.HasPrefix(got, strings.TrimSpace(tt.fault.Text)) && !strings.HasPrefix(got, strconv.Itoa(tt.code)+" ") {
				t.Fatalf("greeting %q, want code %d", got, tt.code)
			}
		})
	}
}

func TestServerTLSAndAuth(t *testing.T) {
	users := map[string]string{"alice": "secret"}
	t.Run("starttls plain", func(t *testing.T) {
		s := NewServer(t, Options{TLS: TLSStartTLS, Users: users})
		c, err := smtp.DialStartTLS(s.Addr(), s.ClientTLSConfig())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		if err := send(t, c, "f@example.org", "a@example.org"); smtpCode(err) != 530 {
			t.Fatalf("send before AUTH: %v, want 530", err)
		}
		if err := c.Auth(sasl.NewPlainClient("", "alice", "secret")); err != nil {
			t.Fatalf("auth: %v", err)
		}
		if err := send(t, c, "f@example.org", "a@example.org"); err != nil {
			t.Fatalf("send: %v", err)
		}
		if n := len(s.Messages()); n != 1 {
			t.Fatalf("ledger has %d messages, want 1", n)
		}
	})
	t.Run("implicit tls login wrong password", func(t *testing.T) {
		s := NewServer(t, Options{TLS: TLSImplicit, Users: users})
		c, err := smtp.DialTLS(s.Addr(), s.ClientTLSConfig())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		if err := c.Auth(sasl.NewLoginClient("alice", "wrong")); smtpCode(err) != 535 {
			t.Fatalf("auth: %v, want 535", err)
		}
	})
	t.Run("auth 454 scripted", func(t *testing.T) {
		s := NewServer(t, Options{Users: users, Faults: At(When{Stage: Auth}, Fault{Code: 454, Enhanced: "4.7.0", Text: "try later"})})
		c := dial(t, s)
		if err := c.Auth(sasl.NewPlainClient("", "alice", "secret")); smtpCode(err) != 454 {
			t.Fatalf("auth: %v, want 454", err)
		}
	})
}

func TestServerMaxOpenConns(t *testing.T) {
	s := NewServer(t, Options{})
	var wg sync.WaitGroup
	clients := make([]*smtp.Client, 3)
	for i := range clients {
		clients[i] = dial(t, s)
	}
	for _, c := range clients {
		wg.Go(func() {
			if err := c.Hello("localhost"); err != nil {
				t.Errorf("hello: %v", err)
			}
		})
	}
	wg.Wait()
	if got := s.MaxOpenConns(); got != 3 {
		t.Fatalf("MaxOpenConns = %d, want 3", got)
	}
	if got := s.Conns(); got != 3 {
		t.Fatalf("Conns = %d, want 3", got)
	}
}

func TestServerChunkingOffered(t *testing.T) {
	for _, chunking := range []bool{false, true} {
		t.Run(strconv.FormatBool(chunking), func(t *testing.T) {
			s := NewServer(t, Options{Chunking: chunking})
			c := dial(t, s)
			if err := c.Hello("localhost"); err != nil {
				t.Fatal(err)
			}
			if got, _ := c.Extension("CHUNKING"); got != chunking {
				t.Errorf("CHUNKING offered: %v, want %v", got, chunking)
			}
			for _, ext := range []string{"PIPELINING", "8BITMIME", "SIZE"} {
				if ok, _ := c.Extension(ext); !ok {
					t.Errorf("%s not offered", ext)
				}
			}
			// go-smtp's client knows no BDAT: it sends DATA.
			if err := send(t, c, "f@example.org", "a@example.org"); err != nil {
				t.Fatalf("send: %v", err)
			}
			msgs := s.Messages()
			if len(msgs) != 1 || msgs[0].Chunked || string(msgs[0].Data) != testMsg {
				t.Fatalf("ledger %+v, want one message sent with DATA", msgs)
			}
		})
	}
}

// bdatClient speaks just enough SMTP to send BDAT chunks.
type bdatClient struct {
	t  *testing.T
	nc net.Conn
	tp *textproto.Conn
}

func dialBDAT(t *testing.T, s *Server) *bdatClient {
	t.Helper()
	nc, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = nc.Close() })
	c := &bdatClient{t: t, nc: nc, tp: textproto.NewConn(nc)}
	if _, _, err := c.tp.ReadResponse(220); err != nil {
		t.Fatalf("greeting: %v", err)
	}
	_, msg, err := c.cmd("EHLO localhost")
	if err != nil || !strings.Contains(msg, "CHUNKING") {
		t.Fatalf("EHLO: %q, %v; want CHUNKING offered", msg, err)
	}
	return c
}

// cmd sends line and reads the reply.
func (c *bdatClient) cmd(line string) (int, string, error) {
	c.t.Helper()
	if err := c.tp.PrintfLine("%s", line); err != nil {
		return 0, "", err
	}
	return c.tp.ReadResponse(0)
}

// send runs a transaction with data in the given chunks (the last one with
// LAST) and returns the reply to the last BDAT.
func (c *bdatClient) send(to string, chunks ...string) (int, error) {
	c.t.Helper()
	if code, _, err := c.cmd("MAIL FROM:<f@example.org>"); err != nil || code != 250 {
		return code, err
	}
	if code, _, err := c.cmd("RCPT TO:<" + to + ">"); err != nil || code != 250 {
		return code, err
	}
	for i, ch := range chunks {
		last := ""
		if i == len(chunks)-1 {
			last = " LAST"
		}
		if _, err := io.WriteString(c.nc, "BDAT "+strconv.Itoa(len(ch))+last+"\r\n"+ch); err != nil {
			return 0, err
		}
		code, _, err := c.tp.ReadResponse(0)
		if err != nil || code != 250 || last != "" {
			return code, err
		}
	}
	return 0, errors.New("no chunks")
}

func TestServerBDAT(t *testing.T) {
	const msg = ".leading dot\r\n..two\r\nBDAT 5 LAST\r\n.\r\n"
	tests := []struct {
		name     string
		fault    func(Command) Fault
		chunks   []string
		wantCode int  // the reply to the last BDAT; 0 for no reply
		wantMsgs int  // in the ledger
		wantCut  bool // the ledger's message is Cut
		wantNext bool // the connection serves another transaction
	}{
		{name: "one chunk", chunks: []string{msg}, wantCode: 250, wantMsgs: 1, wantNext: true},
		{name: "three chunks", chunks: []string{msg[:3], msg[3:10], msg[10:]}, wantCode: 250, wantMsgs: 1, wantNext: true},
		{
			name:   "BDAT 554: the chunk is thrown away",
			fault:  At(When{Stage: Data, Addr: "a@example.org", FirstAttempt: true}, Fault{Code: 554, Text: "no"}),
			chunks: []string{msg}, wantCode: 554, wantNext: true,
		},
		{
			name:   "BDAT 421 then close",
			fault:  At(When{Stage: Data, Addr: "a@example.org", FirstAttempt: true}, Fault{Code: 421, Close: true}),
			chunks: []string{msg}, wantCode: 421,
		},
		{
			name:   "drop at BDAT",
			fault:  At(When{Stage: Data, Addr: "a@example.org", FirstAttempt: true}, Fault{Drop: true}),
			chunks: []string{msg},
		},
		{
			name:   "drop mid-chunk keeps nothing",
			fault:  At(When{Stage: Body, Addr: "a@example.org", FirstAttempt: true}, Fault{Drop: true, AfterBytes: 10}),
			chunks: []string{msg},
		},
		{
			name:   "451 to LAST",
			fault:  At(When{Stage: EndOfData, Addr: "a@example.org", FirstAttempt: true}, Fault{Code: 451}),
			chunks: []string{msg}, wantCode: 451, wantNext: true,
		},
		{
			name:   "drop after LAST keeps the message, cut",
			fault:  At(When{Stage: EndOfData, Addr: "a@example.org", FirstAttempt: true}, Fault{Drop: true}),
			chunks: []string{msg}, wantMsgs: 1, wantCut: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewServer(t, Options{Chunking: true, Faults: tt.fault})
			c := dialBDAT(t, s)
			code, err := c.send("a@example.org", tt.chunks...)
			if code != tt.wantCode || (tt.wantCode == 0) != (err != nil) {
				t.Fatalf("send: %d, %v; want %d", code, err, tt.wantCode)
			}
			msgs := s.Messages()
			if len(msgs) != tt.wantMsgs {
				t.Fatalf("ledger has %d messages, want %d", len(msgs), tt.wantMsgs)
			}
			for _, m := range msgs {
				if string(m.Data) != msg || m.Size != len(msg) || !m.Chunked || m.Cut != tt.wantCut {
					t.Errorf("ledger %+v, want %q chunked, Cut %v", m, msg, tt.wantCut)
				}
			}
			if !tt.wantNext {
				return
			}
			if code, _, err := c.cmd("RSET"); err != nil || code != 250 {
				t.Fatalf("RSET: %d, %v", code, err)
			}
			if code, err := c.send("b@example.org", "x\r\n"); err != nil || code != 250 {
				t.Fatalf("next transaction: %d, %v", code, err)
			}
			if msgs := s.Messages(); len(msgs) != tt.wantMsgs+1 || string(msgs[len(msgs)-1].Data) != "x\r\n" {
				t.Fatalf("ledger after the next transaction: %+v", msgs)
			}
		})
	}
}

func TestBDATSize(t *testing.T) {
	tests := []struct {
		cmd  string
		want int64
	}{
		{"BDAT 5", 5},
		{"bdat 5 last", 5},
		{"BDAT  0  LAST", 0},
		{"BDAT 4294967295 LAST", 4294967295},
		{"BDAT 4294967296", -1},
		{"BDAT", -1},
		{"BDAT x", -1},
		{"BDAT -5", -1},
		{"BDAT 5 MORE", -1},
		{"DATA", -1},
		{"BDATA 5", -1},
	}
	for _, tt := range tests {
		t.Run(tt.cmd, func(t *testing.T) {
			if got := bdatSize([]byte(tt.cmd)); got != tt.want {
				t.Errorf("bdatSize(%q) = %d, want %d", tt.cmd, got, tt.want)
			}
		})
	}
}

// TestServerStartTLSFaults: at the StartTLS stage a scripted reply
// replaces the 220 and the session stays in plaintext, and Inject sends
// plaintext lines right after the 220, before the handshake.
func TestServerStartTLSFaults(t *testing.T) {
	const injected = "250-injected\r\n250 AUTH PLAIN\r\n"
	tests := []struct {
		name      string
		fault     Fault
		wantReply string // the bytes after EHLO's reply, up to the injected lines' end
		wantTLS   bool   // the server then expects a handshake
	}{
		{"normal", Fault{}, "220 2.0.0 Ready to start TLS\r\n", true},
		{"inject", Fault{Inject: injected}, "220 2.0.0 Ready to start TLS\r\n" + injected, true},
		{"454 instead", Fault{Code: 454, Enhanced: "4.7.0", Text: "TLS not available"}, "454 4.7.0 TLS not available\r\n", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewServer(t, Options{TLS: TLSStartTLS, Faults: At(When{Stage: StartTLS}, tt.fault)})
			nc, err := net.Dial("tcp", s.Addr())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = nc.Close() })
			tp := textproto.NewConn(nc)
			if _, _, err := tp.ReadResponse(220); err != nil {
				t.Fatalf("greeting: %v", err)
			}
			if _, err := tp.Cmd("EHLO localhost"); err != nil {
				t.Fatal(err)
			}
			if _, msg, err := tp.ReadResponse(250); err != nil || !strings.Contains(msg, "STARTTLS") {
				t.Fatalf("EHLO: %q, %v", msg, err)
			}
			if _, err := io.WriteString(nc, "STARTTLS\r\n"); err != nil {
				t.Fatal(err)
			}
			got := make([]byte, len(tt.wantReply))
			if _, err := io.ReadFull(tp.R, got); err != nil || string(got) != tt.wantReply {
				t.Fatalf("reply to STARTTLS %q, %v; want %q", got, err, tt.wantReply)
			}
			if tp.R.Buffered() != 0 {
				t.Fatalf("%d more bytes after the reply", tp.R.Buffered())
			}
			if tt.wantTLS {
				conf := s.ClientTLSConfig()
				conf.ServerName = "localhost"
				tc := tls.Client(nc, conf)
				if err := tc.HandshakeContext(t.Context()); err != nil {
					t.Fatalf("handshake after the reply: %v", err)
				}
				return
			}
			if _, err := tp.Cmd("NOOP"); err != nil {
				t.Fatal(err)
			}
			if _, _, err := tp.ReadResponse(250); err != nil {
				t.Fatalf("NOOP in plaintext after the refused STARTTLS: %v", err)
			}
		})
	}
}
