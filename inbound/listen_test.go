package inbound_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/emersion/go-smtp"

	"github.com/postroom/postroom/events"
	"github.com/postroom/postroom/inbound"
)

// TestSTARTTLS: with Options.TLS the server offers STARTTLS, and a bounce
// taken under TLS is acted on like any other.
func TestSTARTTLS(t *testing.T) {
	// net/http/httptest's certificate, for 127.0.0.1.
	hs := httptest.NewTLSServer(nil)
	cert := hs.TLS.Certificates[0]
	roots := x509.NewCertPool()
	roots.AddCert(hs.Certificate())
	hs.Close()

	sends, _ := events.NewMemory(events.MemoryOptions{})
	list := newSuppressions(t)
	rec, err := inbound.New(inbound.Options{
		VERP: verp, Sends: sends, Suppressions: list, Logger: testLogger(t),
		TLS: &tls.Config{Certificates: []tls.Certificate{cert}},
	})
	if err != nil {
		t.Fatal(err)
	}
	addr := serve(t, rec, false)
	f := &fixture{sends: sends, supp: list}
	id := f.send("ann@example.net")

	c, err := smtp.DialStartTLS(addr, &tls.Config{RootCAs: roots, ServerName: "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, ok := c.TLSConnectionState(); !ok {
		t.Fatal("no TLS after STARTTLS")
	}
	if err := c.Mail("", nil); err != nil {
		t.Fatal(err)
	}
	if err := c.Rcpt(verp.Address(id), nil); err != nil {
		t.Fatal(err)
	}
	w, err := c.Data()
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(w, strings.NewReader(dsn(verp.Address(id), "ann@example.net", "failed", "5.1.1", "550 5.1.1 User unknown")))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	c.Quit()
	if r := f.listed(t, "ann@example.net"); r != "hard-bounce" {
		t.Errorf("listed as %q under TLS, want hard-bounce", r)
	}
}

// TestLMTPUnixSocket: ServeLMTP on a Unix socket, as a Postfix
// transport_maps entry lmtp:unix:PATH reaches it.
func TestLMTPUnixSocket(t *testing.T) {
	sends, _ := events.NewMemory(events.MemoryOptions{})
	list := newSuppressions(t)
	rec, err := inbound.New(inbound.Options{VERP: verp, Sends: sends, Suppressions: list, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "lmtp.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- rec.ServeLMTP(ctx, ln) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("ServeLMTP: %v", err)
		}
	}()
	f := &fixture{sends: sends, supp: list}
	id := f.send("ann@example.net")

	conn, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	c := smtp.NewClientLMTP(conn)
	defer c.Close()
	if err := c.Hello("localhost"); err != nil {
		t.Fatal(err)
	}
	if err := c.Mail("", nil); err != nil {
		t.Fatal(err)
	}
	if err := c.Rcpt(verp.Address(id), nil); err != nil {
		t.Fatal(err)
	}
	w, err := c.Data()
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(w, dsn(verp.Address(id), "ann@example.net", "failed", "5.1.1", "550 5.1.1 User unknown"))
	if _, err := w.CloseWithLMTPResponse(); err != nil {
		t.Fatal(err)
	}
	c.Quit()
	if r := f.listed(t, "ann@example.net"); r != "hard-bounce" {
		t.Errorf("listed as %q, want hard-bounce", r)
	}
}
