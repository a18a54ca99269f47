package outbox_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// workerBuild is the outboxworker program, built once per test binary by
// buildWorker into dir, which TestMain removes.
var workerBuild struct {
	once sync.Once
	dir  string
	bin  string
	err  error
}

// buildWorker returns the path of internal/outboxworker, built on the
// first call (the process tests share one build).
func buildWorker(t testing.TB) string {
	t.Helper()
	b := &workerBuild
	b.once.Do(func() {
		gobin, err := exec.LookPath("go")
		if err != nil {
			b.err = fmt.Errorf("the go command is needed to build the worker: %w", err)
			return
		}
		if b.dir, b.err = os.MkdirTemp("", "outboxworker-"); b.err != nil {
			return
		}
		bin := filepath.Join(b.dir, "outboxworker")
		build := exec.Command(gobin, "build", "-o", bin, "./internal/outboxworker")
		if out, err := build.CombinedOutput(); err != nil {
			b.err = fmt.Errorf("go build: %w\n%s", err, out)
			return
		}
		b.bin = bin
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.bin
}

// removeWorker removes buildWorker's folder, if it made one.
func removeWorker() {
	if workerBuild.dir != "" {
		os.RemoveAll(workerBuild.dir)
	}
}

// proc is one outboxworker process.
type proc struct {
	cmd    *exec.Cmd
	log    *procLog
	exited chan error
}

// procLog keeps a process's standard error, line by line, and reports
// its "ready" record.
type procLog struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	lines   []string
	partial []byte
	ready   chan struct{}
	once    sync.Once
}

func (w *procLog) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	w.partial = append(w.partial, p...)
	for {
		i := bytes.IndexByte(w.partial, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := string(w.partial[:i])
		w.partial = w.partial[i+1:]
		w.lines = append(w.lines, line)
		if strings.Contains(line, "msg=ready") {
			w.once.Do(func() { close(w.ready) })
		}
	}
}

func (w *procLog) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// batches returns the ranges [from, to] of the batches the process
// started (and reserved as it handed them over), from its "outbox batch"
// records.
func (w *procLog) batches() [][2]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out [][2]int
	for _, line := range w.lines {
		if !strings.Contains(line, `msg="outbox batch"`) {
			continue
		}
		var r [2]int
		for _, f := range strings.Fields(line) {
			if v, ok := strings.CutPrefix(f, "from="); ok {
				r[0], _ = strconv.Atoi(v)
			}
			if v, ok := strings.CutPrefix(f, "to="); ok {
				r[1], _ = strconv.Atoi(v)
			}
		}
		out = append(out, r)
	}
	return out
}

// startWorker starts bin with args on the database dsn and waits for it
// to be ready. It is stopped (SIGTERM) when the test ends, unless killed
// before.
func startWorker(t testing.TB, bin, dsn string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "POSTROOM_OUTBOX_DSN="+dsn)
	p := &proc{cmd: cmd, log: &procLog{ready: make(chan struct{})}, exited: make(chan error, 1)}
	cmd.Stderr = p.log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		<-p.exited
		if t.Failed() {
			t.Logf("worker %d log:\n%s", cmd.Process.Pid, tail(p.log.String(), 40))
		}
	})
	select {
	case <-p.log.ready:
	case err := <-p.exited:
		p.exited <- err
		t.Fatalf("worker exited at start: %v\n%s", err, p.log.String())
	}
	return p
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// stopWorker stops p with SIGTERM and waits for it to exit.
func stopWorker(t testing.TB, p *proc) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err := <-p.exited
	p.exited <- err // for the cleanup's wait
	if err != nil {
		t.Errorf("worker exited: %v\n%s", err, tail(p.log.String(), 20))
	}
}
