package pgtest

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"
)

// Server is a PostgreSQL of one test's own, started by NewServer, which
// the test can restart: for tests of what survives the database going
// away. It needs the binaries (EnvURL's server cannot be restarted from
// here). Its methods are safe for concurrent use.
type Server struct {
	mu  sync.Mutex
	srv *server
}

// NewServer starts a server for t alone (initdb into a fresh temporary
// folder, as for the package's shared server) and stops it, removing its
// folder, when t ends. It skips or fails t when PostgreSQL is not
// installed (see the package documentation).
func NewServer(t testing.TB) *Server {
	t.Helper()
	srv, err := start()
	if err != nil {
		unavailable(t, err)
		return nil
	}
	s := &Server{srv: srv}
	t.Cleanup(func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if err := s.srv.stop(); err != nil {
			t.Error(err)
		}
	})
	return s
}

// DSN creates a database on s for t alone and returns its DSN. The
// database goes with the server when t ends.
func (s *Server) DSN(t testing.TB) string {
	t.Helper()
	s.mu.Lock()
	admin := s.srv.dsn("postgres")
	s.mu.Unlock()
	name := fmt.Sprintf("pgtest_%d_%d", os.Getpid(), dbSeq.Add(1))
	if err := adminExec(context.Background(), admin, "CREATE DATABASE "+name+" TEMPLATE template0"); err != nil {
		t.Fatalf("pgtest: create database: %v", err)
	}
	dsn, err := withDatabase(admin, name)
	if err != nil {
		t.Fatal(err)
	}
	return dsn
}

// Restart shuts s down (PostgreSQL's fast shutdown: every session is
// ended, as in a restart by an operator), keeps it down for down, and
// starts it again on the same data and port; it returns once the server
// accepts connections again.
func (s *Server) Restart(down time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.srv.restart(down)
}
