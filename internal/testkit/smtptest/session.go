package smtptest

import (
	"bytes"
	"crypto/hmac"
	"crypto/md5"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"sync"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

type backend struct{ s *Server }

// NewSession is called by go-smtp on EHLO or HELO: the Hello stage.
func (b backend) NewSession(c *smtp.Conn) (smtp.Session, error) {
	nc := c.Conn()
	if tc, ok := nc.(*tls.Conn); ok {
		nc = tc.NetConn()
	}
	fc, ok := nc.(*conn)
	if !ok {
		return nil, fmt.Errorf("smtptest: unexpected connection type %T", nc)
	}
	sess := &session{s: b.s, c: c, fc: fc}
	if err := sess.apply(b.s.fault(Hello, "", fc.num)); err != nil {
		return nil, err
	}
	return sess, nil
}

type session struct {
	s      *Server
	c      *smtp.Conn
	fc     *conn
	authed bool

	// mu guards the transaction: go-smtp runs Data on a goroutine of its
	// own for BDAT, and a client may send RSET while it reads.
	mu    sync.Mutex
	from  string
	rcpts []string
}

// apply carries out f for a stage go-smtp hands to the session. A non-nil
// error is the reply go-smtp sends, or errDropped when the connection is
// already closed.
func (s *session) apply(f Fault) error {
	s.fc.sleep(f.Delay)
	switch {
	case f.Drop:
		_ = s.fc.Close()
		return errDropped
	case f.Raw != "" || (f.Code != 0 && f.Close):
		_, _ = s.c.Conn().Write(f.line())
		_ = s.fc.Close()
		return errDropped
	case f.Code != 0:
		return f.smtpError()
	}
	return nil
}

func (s *session) Reset() {
	s.mu.Lock()
	s.from, s.rcpts = "", nil
	s.mu.Unlock()
	s.fc.setRcpts(nil)
}

func (s *session) Logout() error { return nil }

func (s *session) Mail(from string, _ *smtp.MailOptions) error {
	if len(s.s.opts.Users) > 0 && !s.authed {
		return &smtp.SMTPError{Code: 530, EnhancedCode: smtp.EnhancedCode{5, 7, 0}, Message: "Authentication required"}
	}
	if err := s.apply(s.s.fault(Mail, from, s.fc.num)); err != nil {
		return err
	}
	s.mu.Lock()
	s.from = from
	s.mu.Unlock()
	return nil
}

func (s *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	if err := s.apply(s.s.fault(Rcpt, to, s.fc.num)); err != nil {
		return err
	}
	s.mu.Lock()
	s.rcpts = append(s.rcpts, to)
	rcpts := s.rcpts
	s.mu.Unlock()
	s.fc.setRcpts(rcpts)
	return nil
}

// Data reads the message after DATA, or from the BDAT chunks (on a
// goroutine of go-smtp's, until the LAST chunk), and applies the Body and
// EndOfData faults.
func (s *session) Data(r io.Reader) error {
	s.mu.Lock()
	m := Message{From: s.from, To: slices.Clone(s.rcpts), Conn: s.fc.num, Chunked: s.fc.isChunked()}
	s.mu.Unlock()
	first := m.To[0]
	f := s.s.fault(Body, first, s.fc.num)
	s.fc.sleep(f.Delay)
	if f.Drop {
		_, _ = io.CopyN(io.Discard, r, int64(f.AfterBytes))
		s.fc.reset()
		return errDropped
	}
	if s.s.opts.DiscardData {
		n, err := io.Copy(io.Discard, r)
		if err != nil {
			return err
		}
		m.Size = int(n)
	} else {
		var b bytes.Buffer
		if _, err := b.ReadFrom(r); err != nil {
			return err
		}
		m.Data, m.Size = b.Bytes(), b.Len()
	}
	f = s.s.fault(EndOfData, first, s.fc.num)
	s.fc.sleep(f.Delay)
	switch {
	case f.Drop || f.Raw != "":
		m.Cut = true
		s.s.record(m)
		f.Delay = 0
		return s.apply(f)
	case f.Code/100 == 2 || f.Code == 0:
		s.s.record(m)
	}
	f.Delay = 0
	return s.apply(f)
}

// AuthMechanisms implements smtp.AuthSession.
func (s *session) AuthMechanisms() []string {
	if len(s.s.opts.Users) == 0 {
		return nil
	}
	return []string{sasl.Plain, sasl.Login, "CRAM-MD5", "XOAUTH2"}
}

// Auth implements smtp.AuthSession.
func (s *session) Auth(mech string) (sasl.Server, error) {
	check := func(user string, ok func(password string) bool) error {
		if err := s.apply(s.s.fault(Auth, user, s.fc.num)); err != nil {
			return err
		}
		password, known := s.s.opts.Users[user]
		if !known || !ok(password) {
			return smtp.ErrAuthFailed
		}
		s.authed = true
		return nil
	}
	switch mech {
	case sasl.Plain:
		return sasl.NewPlainServer(func(_, user, pass string) error {
			return check(user, func(p string) bool { return p == pass })
		}), nil
	case sasl.Login:
		return &loginServer{check: check}, nil
	case "CRAM-MD5":
		return &cramServer{check: check, challenge: fmt.Sprintf("<%d.smtptest@localhost>", s.fc.num)}, nil
	case "XOAUTH2":
		return &xoauth2Server{check: check}, nil
	}
	return nil, smtp.ErrAuthUnknownMechanism
}

type checkFunc func(user string, ok func(password string) bool) error

// loginServer is the server side of AUTH LOGIN (draft-murchison-sasl-login).
type loginServer struct {
	check checkFunc
	step  int
	user  string
}

func (l *loginServer) Next(resp []byte) ([]byte, bool, error) {
	switch l.step {
	case 0:
		l.step = 1
		if len(resp) == 0 {
			return []byte("Username:"), false, nil
		}
		fallthrough
	case 1:
		l.user, l.step = string(resp), 2
		return []byte("Password:"), false, nil
	default:
		return nil, true, l.check(l.user, func(p string) bool { return p == string(resp) })
	}
}

// cramServer is the server side of CRAM-MD5 (RFC 2195).
type cramServer struct {
	check     checkFunc
	challenge string
	sent      bool
}

func (c *cramServer) Next(resp []byte) ([]byte, bool, error) {
	if !c.sent {
		c.sent = true
		return []byte(c.challenge), false, nil
	}
	user, digest, _ := strings.Cut(string(resp), " ")
	return nil, true, c.check(user, func(p string) bool {
		h := hmac.New(md5.New, []byte(p))
		h.Write([]byte(c.challenge))
		return hmac.Equal([]byte(hex.EncodeToString(h.Sum(nil))), []byte(digest))
	})
}

// xoauth2Server is the server side of XOAUTH2: one initial response
// "user=U\x01auth=Bearer T\x01\x01".
type xoauth2Server struct{ check checkFunc }

func (x *xoauth2Server) Next(resp []byte) ([]byte, bool, error) {
	if len(resp) == 0 {
		return []byte{}, false, nil
	}
	var user, token string
	for _, f := range strings.Split(string(resp), "\x01") {
		if v, ok := strings.CutPrefix(f, "user="); ok {
			user = v
		}
		if v, ok := strings.CutPrefix(f, "auth=Bearer "); ok {
			token = v
		}
	}
	return nil, true, x.check(user, func(p string) bool { return p == token })
}

var _ net.Conn = (*conn)(nil)
