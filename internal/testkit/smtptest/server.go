// Package smtptest runs an in-process SMTP server for tests: go-smtp on
// 127.0.0.1:0, a ledger of the messages it accepted, and faults scripted per
// command in the manner of Postfix's smtp-sink (a chosen reply, a delay, a
// dropped connection, 421 then disconnect, a malformed reply, plaintext
// injected after the 220 to STARTTLS), chosen by a
// function of the command, its address and the attempt number so that a
// load test can inject a mix deterministically.
//
// It is internal: its API changes with the tests that use it.
//
// From the module it imports only postroom (CheckLedger reads Results);
// only tests and internal/testkit/bench (its SMTP benchmark) import it.
package smtptest

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log"
	"maps"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-smtp"
)

// TLSMode says how the server offers TLS.
type TLSMode int

// TLS modes.
const (
	// TLSNone offers no TLS (the zero value).
	TLSNone TLSMode = iota
	// TLSStartTLS advertises STARTTLS on a plaintext connection.
	TLSStartTLS
	// TLSImplicit speaks TLS from the first byte (port 465 style).
	TLSImplicit
)

// Options configures a Server. The zero value is a plaintext server without
// AUTH, keeping every message's bytes, with no faults.
type Options struct {
	// Faults scripts the server's answers. It is called once per command
	// (see Stage) from the connection's goroutine, concurrently for
	// different connections. Nil or a zero Fault means a normal answer.
	// At and Each build the common scripts.
	Faults func(Command) Fault
	// TLS is how TLS is offered, with a certificate for 127.0.0.1 and
	// localhost generated at start (see Server.ClientTLSConfig).
	TLS TLSMode
	// Users, when not empty, makes AUTH (PLAIN, LOGIN, CRAM-MD5, XOAUTH2)
	// required before MAIL: user name to password (the token for XOAUTH2).
	// AUTH is offered over plaintext too, so that clients are tested on
	// refusing it.
	Users map[string]string
	// MaxMessageBytes is advertised with SIZE and enforced (552). Zero means
	// no limit.
	MaxMessageBytes int64
	// SMTPUTF8 advertises SMTPUTF8.
	SMTPUTF8 bool
	// DiscardData keeps only each message's size in the ledger, not its
	// bytes, for load tests.
	DiscardData bool
	// Chunking offers CHUNKING (RFC 3030, BDAT) in the EHLO reply. When
	// false (the zero value) the server does not list it, so that clients
	// send DATA. go-smtp always lists it and the connection wrapper takes
	// it out, which it can only do on a plaintext connection: under TLS
	// (TLSImplicit, or after STARTTLS) CHUNKING is offered whatever this
	// says. The faults apply to BDAT as to DATA; see Stage.
	Chunking bool
}

// Message is one message the server accepted (or, with Cut, may have).
type Message struct {
	From string
	To   []string
	// Data is the message as received: after DATA without the final dot
	// and with dot stuffing undone, after BDAT the chunks' bytes as sent;
	// nil with Options.DiscardData.
	Data []byte
	Size int
	// Chunked is set when the message came in BDAT chunks rather than
	// after DATA.
	Chunked bool
	// Conn is the connection's number, from 1.
	Conn int
	// Cut is set when the server read the whole message and then closed the
	// connection without a reply (Drop at EndOfData) or with a malformed one:
	// the client cannot know the message was kept.
	Cut bool
}

// Server is a running test server. Its methods are safe for concurrent use.
type Server struct {
	opts Options
	srv  *smtp.Server
	ln   net.Listener
	cert tls.Certificate
	wg   sync.WaitGroup // Serve and the greeting fault goroutines

	mu       sync.Mutex
	conns    int // accepted so far
	open     int
	maxOpen  int
	attempts map[attemptKey]int
	live     map[*conn]struct{} // open connections
	closing  bool
	ledger   []Message
}

type attemptKey struct {
	stage Stage
	addr  string
}

// NewServer starts a server on 127.0.0.1:0 and stops it in t.Cleanup.
func NewServer(t testing.TB, opts Options) *Server {
	t.Helper()
	s := &Server{opts: opts, attempts: make(map[attemptKey]int), live: make(map[*conn]struct{})}
	cert, err := newCertificate()
	if err != nil {
		t.Fatalf("smtptest: certificate: %v", err)
	}
	s.cert = cert
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("smtptest: listen: %v", err)
	}
	s.ln = ln
	s.srv = smtp.NewServer(backend{s})
	s.srv.Domain = "localhost"
	s.srv.AllowInsecureAuth = true
	s.srv.MaxMessageBytes = opts.MaxMessageBytes
	s.srv.EnableSMTPUTF8 = opts.SMTPUTF8
	s.srv.ErrorLog = log.New(io.Discard, "", 0)
	var l net.Listener = &listener{Listener: ln, srv: s}
	tlsConf := &tls.Config{Certificates: []tls.Certificate{cert}}
	switch opts.TLS {
	case TLSStartTLS:
		s.srv.TLSConfig = tlsConf
	case TLSImplicit:
		l = tls.NewListener(l, tlsConf)
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		_ = s.srv.Serve(l)
	}()
	t.Cleanup(s.Close)
	return s
}

// Addr is the server's host:port.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// ClientTLSConfig returns a TLS configuration that trusts the server's
// certificate. The caller owns it.
func (s *Server) ClientTLSConfig() *tls.Config {
	return clientTLSConfig(s.cert)
}

// Close stops the server, closes every connection and waits for the
// server's goroutines. NewServer registers it with t.Cleanup; calling it
// again does nothing.
func (s *Server) Close() {
	// go-smtp's Server.Close closes its connections from this goroutine
	// while their own may be reading a BDAT chunk, a data race in go-smtp
	// (Conn.Close against handleBdat). So the connections are closed below
	// go-smtp, whose goroutines then end on their own, and Shutdown waits
	// for them. The listener is closed here too: go-smtp only closes the
	// listeners Serve has registered, which it may not have done yet.
	_ = s.ln.Close()
	s.mu.Lock()
	s.closing = true
	live := slices.Collect(maps.Keys(s.live))
	s.mu.Unlock()
	for _, c := range live {
		_ = c.Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.srv.Shutdown(ctx); errors.Is(err, context.DeadlineExceeded) {
		_ = s.srv.Close()
	}
	s.wg.Wait()
}

// Messages returns a copy of the ledger, in the order accepted.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.ledger)
}

// Conns is the number of connections accepted so far.
func (s *Server) Conns() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conns
}

// OpenConns is the number of connections open now.
func (s *Server) OpenConns() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.open
}

// MaxOpenConns is the most connections that were open at once.
func (s *Server) MaxOpenConns() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxOpen
}

// newConn wraps and counts an accepted connection; one accepted while
// the server closes is closed at once.
func (s *Server) newConn(nc net.Conn) *conn {
	s.mu.Lock()
	s.conns++
	s.open++
	s.maxOpen = max(s.maxOpen, s.open)
	c := newConn(nc, s, s.conns)
	s.live[c] = struct{}{}
	closing := s.closing
	s.mu.Unlock()
	if closing {
		_ = c.Close()
	}
	return c
}

func (s *Server) connClosed(c *conn) {
	s.mu.Lock()
	s.open--
	delete(s.live, c)
	s.mu.Unlock()
}

// fault counts the attempt and asks Options.Faults.
func (s *Server) fault(stage Stage, addr string, connNum int) Fault {
	s.mu.Lock()
	k := attemptKey{stage, addr}
	s.attempts[k]++
	n := s.attempts[k]
	s.mu.Unlock()
	if s.opts.Faults == nil {
		return Fault{}
	}
	return s.opts.Faults(Command{Stage: stage, Addr: addr, Attempt: n, Conn: connNum})
}

func (s *Server) record(m Message) {
	s.mu.Lock()
	s.ledger = append(s.ledger, m)
	s.mu.Unlock()
}

// errDropped is returned to go-smtp after the connection was closed; its
// reply goes nowhere.
var errDropped = errors.New("smtptest: connection dropped by script")
