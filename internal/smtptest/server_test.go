package smtptest

import (
	"bufio"
	"errors"
	"io"
	"net"
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
			name: "rcpt 550 for one address",
			fault: func(c Command) Fault {
				if c.Stage == Rcpt && c.Addr == "bad@example.org" {
					return Fault{Code: 550, Enhanced: "5.1.1", Text: "no such user"}
				}
				return Fault{}
			},
			to: []string{"bad@example.org"}, wantCode: 550,
		},
		{
			name: "mail 451",
			fault: func(c Command) Fault {
				if c.Stage == Mail {
					return Fault{Code: 451}
				}
				return Fault{}
			},
			to: []string{"a@example.org"}, wantCode: 451,
		},
		{
			name: "data 554",
			fault: func(c Command) Fault {
				if c.Stage == Data && c.Addr == "a@example.org" {
					return Fault{Code: 554, Text: "no data today"}
				}
				return Fault{}
			},
			to: []string{"a@example.org"}, wantCode: 554,
		},
		{
			name: "end of data 451",
			fault: func(c Command) Fault {
				if c.Stage == EndOfData {
					return Fault{Code: 451}
				}
				return Fault{}
			},
			to: []string{"a@example.org"}, wantCode: 451,
		},
		{
			name: "drop after the dot keeps the message, cut",
			fault: func(c Command) Fault {
				if c.Stage == EndOfData {
					return Fault{Drop: true}
				}
				return Fault{}
			},
			to: []string{"a@example.org"}, wantNet: true, wantMsgs: 1, wantCut: true,
		},
		{
			name: "drop mid body keeps nothing",
			fault: func(c Command) Fault {
				if c.Stage == Body {
					return Fault{Drop: true}
				}
				return Fault{}
			},
			to: []string{"a@example.org"}, wantNet: true,
		},
		{
			name: "rcpt 421 then close",
			fault: func(c Command) Fault {
				if c.Stage == Rcpt {
					return Fault{Code: 421, Close: true}
				}
				return Fault{}
			},
			to: []string{"a@example.org"}, wantCode: 421,
		},
		{
			name: "second attempt passes",
			fault: func(c Command) Fault {
				if c.Stage == Rcpt && c.Attempt == 1 {
					return Fault{Code: 450}
				}
				return Fault{}
			},
			to: []string{"a@example.org"}, wantCode: 450,
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
			s := NewServer(t, Options{Faults: func(c Command) Fault {
				if c.Stage == Greeting {
					return tt.fault
				}
				return Fault{}
			}})
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
		s := NewServer(t, Options{Users: users, Faults: func(c Command) Fault {
			if c.Stage == Auth {
				return Fault{Code: 454, Enhanced: "4.7.0", Text: "try later"}
			}
			return Fault{}
		}})
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
