//go:build linux

package pgtest

import (
	"database/sql"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestServerIsLocalAndUnprivileged(t *testing.T) {
	if os.Getenv(EnvURL) != "" {
		t.Skipf("%s is set: the server is not started here", EnvURL)
	}
	db := openDB(t)
	var addr string
	if err := db.QueryRowContext(t.Context(), "SELECT host(inet_server_addr())").Scan(&addr); err != nil {
		t.Fatal(err)
	}
	if addr != "127.0.0.1" {
		t.Errorf("server address %q; want 127.0.0.1", addr)
	}
	var dataDir string
	if err := db.QueryRowContext(t.Context(), "SHOW data_directory").Scan(&dataDir); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	owner := info.Sys().(*syscall.Stat_t).Uid
	if os.Geteuid() == 0 && owner == 0 {
		t.Errorf("data directory %s is owned by root; the server must not run as root", dataDir)
	}
	if os.Geteuid() != 0 && int(owner) != os.Geteuid() {
		t.Errorf("data directory %s is owned by uid %d; want this process's %d", dataDir, owner, os.Geteuid())
	}
	if !strings.HasPrefix(dataDir, os.TempDir()) {
		t.Errorf("data directory %s is not under %s", dataDir, os.TempDir())
	}
}

// TestStartStop starts a second server, besides the binary's, and checks
// that stop leaves nothing behind: no process, no listener, no folder.
func TestStartStop(t *testing.T) {
	s, err := start()
	if err != nil {
		unavailable(t, err)
	}
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			s.stop()
		}
	})
	db, err := sql.Open("pgx", s.dsn("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	var one int
	err = db.QueryRowContext(t.Context(), "SELECT 1").Scan(&one)
	// An open session does not hold the stop up (fast shutdown).
	if err != nil || one != 1 {
		db.Close()
		t.Fatalf("SELECT 1 = %d, %v", one, err)
	}

	stopped = true
	if err := s.stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	db.Close()
	select {
	case <-s.exited:
	default:
		t.Error("stop returned before the server exited")
	}
	if _, err := os.Stat(s.dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("folder %s after stop: %v; want it removed", s.dir, err)
	}
	if c, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port))); err == nil {
		c.Close()
		t.Errorf("port %d still accepts connections after stop", s.port)
	}
}

func TestFindBin(t *testing.T) {
	root := t.TempDir()
	pattern := filepath.Join(root, "*", "bin")
	if _, err := findBin(pattern); !errors.Is(err, errNotInstalled) {
		t.Fatalf("findBin with nothing installed = %v; want errNotInstalled", err)
	}
	install := func(version string, programs ...string) {
		bin := filepath.Join(root, version, "bin")
		if err := os.MkdirAll(bin, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, p := range programs {
			if err := os.WriteFile(filepath.Join(bin, p), nil, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	install("17", "psql") // a client only: no server to start
	if _, err := findBin(pattern); !errors.Is(err, errNotInstalled) {
		t.Fatalf("findBin with only a client = %v; want errNotInstalled", err)
	}
	install("9", "initdb", "postgres")
	install("15", "initdb", "postgres")
	got, err := findBin(pattern)
	if want := filepath.Join(root, "15", "bin"); err != nil || got != want {
		t.Fatalf("findBin = %q, %v; want %q, the newest version by number", got, err, want)
	}
}

// TestServerRestart: a test's own server goes down (its sessions end)
// and comes back on the same DSN, with its data.
func TestServerRestart(t *testing.T) {
	s := NewServer(t)
	db, err := sql.Open("pgx", s.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(t.Context(), "CREATE TABLE kept (x int); INSERT INTO kept VALUES (7)"); err != nil {
		t.Fatal(err)
	}
	conn, err := db.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := s.Restart(100 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if err := conn.PingContext(t.Context()); err == nil {
		t.Error("a session of before the restart still works")
	}
	var x int
	if err := db.QueryRowContext(t.Context(), "SELECT x FROM kept").Scan(&x); err != nil || x != 7 {
		t.Fatalf("after the restart: %d, %v; want 7", x, err)
	}
}
