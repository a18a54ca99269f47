//go:build linux

package pgtest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// debianBin is where Debian's postgresql packages put their programs, one
// folder per major version.
const debianBin = "/usr/lib/postgresql/*/bin"

// readyLine is what postgres logs once it accepts connections. The server
// runs with lc_messages=C, so the line is in English.
const readyLine = "database system is ready to accept connections"

// startTimeout bounds the wait for a server to come up; it guards against a
// hang, nothing waits for it to pass.
const startTimeout = 2 * time.Minute

// startAttempts is how many free ports start tries: a port found free can
// be taken by another process before postgres binds it.
const startAttempts = 3

// maxLog is how much of the server's log is kept for error messages.
const maxLog = 64 << 10

// server is a postgres started by this process, in a temporary folder of
// its own.
type server struct {
	dir  string // temporary folder: data/ and the Unix socket
	port int
	bin  string              // the PostgreSQL programs' folder
	cred *syscall.Credential // whom postgres runs as; nil: this process's user
	cmd  *exec.Cmd
	log  *serverLog

	exited  chan struct{} // closed once the process has exited
	waitErr error         // the process's exit status, set before exited closes
	logDone chan struct{} // closed once the log reader has seen EOF
}

// start runs initdb in a new temporary folder and starts postgres on a free
// loopback port. It returns errNotInstalled if the binaries are missing.
func start() (*server, error) {
	bin, err := findBin(debianBin)
	if err != nil {
		return nil, err
	}
	cred, err := serverCredential()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "pgtest-")
	if err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("pgtest: %w", err)
		}
	}

	initdb := exec.Command(filepath.Join(bin, "initdb"),
		"--pgdata", filepath.Join(dir, "data"),
		"--username", "postgres", "--auth", "trust",
		"--encoding", "UTF8", "--no-locale", "--no-sync")
	initdb.Dir = dir
	initdb.Env = serverEnv()
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("pgtest: initdb: %w\n%s", err, out)
	}

	for attempt := 1; ; attempt++ {
		s, err := launch(bin, dir, cred)
		if err == nil {
			return s, nil
		}
		if attempt == startAttempts {
			os.RemoveAll(dir)
			return nil, err
		}
	}
}

// launch starts postgres on the data folder in dir, on a free port, and
// waits until it accepts connections. On failure the process has exited.
func launch(bin, dir string, cred *syscall.Credential) (*server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	return launchOn(bin, dir, cred, port)
}

// launchOn is launch on a given port.
func launchOn(bin, dir string, cred *syscall.Credential, port int) (*server, error) {
	socketDir := dir
	if len(dir)+len("/.s.PGSQL.65535") >= 108 { // sun_path's size on Linux
		socketDir = "" // TCP only
	}
	cmd := exec.Command(filepath.Join(bin, "postgres"),
		"-D", filepath.Join(dir, "data"),
		"-p", strconv.Itoa(port),
		"-c", "listen_addresses=127.0.0.1",
		"-c", "unix_socket_directories="+socketDir,
		"-c", "lc_messages=C",
		"-c", "fsync=off",
		"-c", "synchronous_commit=off",
		"-c", "full_page_writes=off",
		"-c", "max_connections=200")
	cmd.Dir = dir
	cmd.Env = serverEnv()
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Credential: cred,
		// If this process dies without stopping the server, the kernel
		// sends the postmaster SIGQUIT (immediate shutdown), which takes
		// its backends down with it.
		Pdeathsig: syscall.SIGQUIT,
	}
	// The log is read from a pipe of our own, not cmd.StderrPipe: the
	// backends inherit it and may write after the postmaster has exited.
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	cmd.Stdout = pw
	cmd.Stderr = pw

	s := &server{
		dir:     dir,
		port:    port,
		bin:     bin,
		cred:    cred,
		cmd:     cmd,
		log:     &serverLog{ready: make(chan struct{})},
		exited:  make(chan struct{}),
		logDone: make(chan struct{}),
	}
	started := make(chan error, 1)
	go func() {
		// The parent-death signal is sent when the thread that started
		// the process ends, not the process (golang/go#27505). This
		// goroutine keeps its thread locked, never unlocked, until the
		// server has exited; the thread then ends with it.
		runtime.LockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		s.waitErr = cmd.Wait()
		close(s.exited)
	}()
	err = <-started
	pw.Close()
	if err != nil {
		pr.Close()
		return nil, fmt.Errorf("pgtest: start postgres: %w", err)
	}
	go func() {
		defer close(s.logDone)
		defer pr.Close()
		s.log.readFrom(pr)
	}()

	timer := time.NewTimer(startTimeout)
	defer timer.Stop()
	select {
	case <-s.log.ready:
		return s, nil
	case <-s.exited:
		<-s.logDone
		return nil, fmt.Errorf("pgtest: postgres exited while starting (%v); its log:\n%s", s.waitErr, s.log)
	case <-timer.C:
		err := fmt.Errorf("pgtest: postgres did not start within %v; its log:\n%s", startTimeout, s.log)
		s.kill()
		return nil, err
	}
}

// dsn returns the DSN of database name on s.
func (s *server) dsn(name string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", s.port, name)
}

// stop shuts the server down (fast shutdown: open sessions are ended),
// waits for it and its log reader to finish, and removes its folder.
func (s *server) stop() error {
	errs := []error{s.halt()}
	if err := os.RemoveAll(s.dir); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("pgtest: stop: %w", err)
	}
	return nil
}

// halt shuts the server down (fast shutdown) and waits for it and its
// log reader, keeping its folder.
func (s *server) halt() error {
	var errs []error
	if err := s.cmd.Process.Signal(syscall.SIGINT); err != nil && !errors.Is(err, os.ErrProcessDone) {
		errs = append(errs, err)
	}
	timer := time.NewTimer(startTimeout)
	defer timer.Stop()
	select {
	case <-s.exited:
		<-s.logDone
		if s.waitErr != nil {
			errs = append(errs, fmt.Errorf("postgres exited with %v; its log:\n%s", s.waitErr, s.log))
		}
	case <-timer.C:
		errs = append(errs, fmt.Errorf("postgres did not stop within %v; its log:\n%s", startTimeout, s.log))
		s.kill()
	}
	return errors.Join(errs...)
}

// restart shuts the server down (fast shutdown: open sessions are
// ended), waits down, and starts it again on the same folder and port.
func (s *server) restart(down time.Duration) error {
	if err := s.halt(); err != nil {
		return fmt.Errorf("pgtest: restart: %w", err)
	}
	time.Sleep(down)
	ns, err := launchOn(s.bin, s.dir, s.cred, s.port)
	if err != nil {
		return fmt.Errorf("pgtest: restart: %w", err)
	}
	*s = *ns
	return nil
}

// kill ends the server at once (SIGQUIT: immediate shutdown, which ends
// the backends too) and waits for it and its log reader.
func (s *server) kill() {
	s.cmd.Process.Signal(syscall.SIGQUIT)
	<-s.exited
	<-s.logDone
}

// findBin returns the bin folder of the newest PostgreSQL installed the
// Debian way (pattern is debianBin, or a test's), or errNotInstalled.
func findBin(pattern string) (string, error) {
	dirs, _ := filepath.Glob(pattern) // the pattern is valid
	dirs = slices.DeleteFunc(dirs, func(d string) bool {
		_, errP := os.Stat(filepath.Join(d, "postgres"))
		_, errI := os.Stat(filepath.Join(d, "initdb"))
		return errP != nil || errI != nil
	})
	if len(dirs) == 0 {
		return "", errNotInstalled
	}
	return slices.MaxFunc(dirs, func(a, b string) int { return binVersion(a) - binVersion(b) }), nil
}

// binVersion is the major version of the PostgreSQL whose programs are in
// the Debian folder bin (/usr/lib/postgresql/15/bin: 15), 0 if the folder
// does not say.
func binVersion(bin string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(bin)))
	return v
}

// version is s's major version, 0 if unknown.
func (s *server) version() int { return binVersion(s.bin) }

// serverCredential returns whom initdb and postgres run as: nil (this
// process's user) unless it is root, which PostgreSQL refuses, and then the
// user "postgres".
func serverCredential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("pgtest: running as root, and PostgreSQL refuses root: %w (the postgresql package creates the user postgres)", err)
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("pgtest: user postgres: uid %q: %w", u.Uid, err)
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("pgtest: user postgres: gid %q: %w", u.Gid, err)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: true}, nil
}

// serverEnv is the environment of initdb and postgres: no PG* variables
// of the caller's, messages in English.
func serverEnv() []string {
	return []string{"PATH=" + os.Getenv("PATH"), "LC_ALL=C", "LANG=C"}
}

// freePort returns a loopback port that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pgtest: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// serverLog keeps the tail of the server's output and closes ready when the
// server says it accepts connections. It is safe for concurrent use.
type serverLog struct {
	ready chan struct{}

	mu    sync.Mutex
	buf   []byte
	seen  bool // ready is closed
	trunc bool // older output was dropped
}

// readFrom reads the server's output until EOF.
func (l *serverLog) readFrom(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxLog)
	for sc.Scan() {
		line := sc.Text()
		l.mu.Lock()
		l.buf = append(l.buf, line...)
		l.buf = append(l.buf, '\n')
		if len(l.buf) > maxLog {
			l.buf = l.buf[len(l.buf)-maxLog:]
			l.trunc = true
		}
		if !l.seen && strings.Contains(line, readyLine) {
			l.seen = true
			close(l.ready)
		}
		l.mu.Unlock()
	}
	// A scanner error (a line over maxLog) ends the reading; drain the
	// rest so the server never blocks writing its log.
	io.Copy(io.Discard, r)
}

// String returns the kept output.
func (l *serverLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.trunc {
		return "...\n" + string(l.buf)
	}
	return string(l.buf)
}
