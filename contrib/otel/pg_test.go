//go:build linux

package postroomotel_test

// A PostgreSQL server of the test's own for the outbox's test: the root
// module's internal/testkit/pgtest is not importable from this module, so this is
// its smallest part: initdb into a temporary folder, postgres on a free
// loopback port (as the user postgres when run as root), stopped at the
// end of the test.

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// startPostgres starts a server and returns its DSN. Without PostgreSQL's
// programs the test is skipped, naming the install command, except under
// CI=true, where it fails.
func startPostgres(t *testing.T) string {
	t.Helper()
	bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin/postgres")
	if len(bins) == 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("PostgreSQL is not installed: apt-get install postgresql")
		}
		t.Skip("PostgreSQL is not installed: apt-get install postgresql")
	}
	sort.Strings(bins)
	bin := filepath.Dir(bins[len(bins)-1])
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Fatalf("running as root needs the user postgres: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	dir, err := os.MkdirTemp("", "postroomotel-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			t.Fatal(err)
		}
	}
	run := func(name string, args ...string) {
		cmd := exec.Command(filepath.Join(bin, name), args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "LC_ALL=C")
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", name, err, out)
		}
	}
	data := filepath.Join(dir, "data")
	run("initdb", "--pgdata", data, "--username", "postgres", "--auth", "trust", "--no-locale", "--encoding", "UTF8", "--no-sync")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	opts := fmt.Sprintf("-p %d -c listen_addresses=127.0.0.1 -c unix_socket_directories= -c fsync=off", port)
	run("pg_ctl", "start", "--pgdata", data, "--wait", "--log", filepath.Join(dir, "log"), "-o", opts)
	t.Cleanup(func() { run("pg_ctl", "stop", "--pgdata", data, "--mode", "immediate", "--wait") })
	dsn := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)
	return dsn
}
