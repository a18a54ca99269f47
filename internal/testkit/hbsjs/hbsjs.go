// Package hbsjs renders handlebars templates with handlebars.js (node's
// handlebars package, pinned in package-lock.json), the reference for what
// a postroom template means, for differential tests. It starts one
// long-lived node process per Renderer running render.js and talks to it
// over pipes, one JSON line per render.
//
// The package is for tests only: nothing outside tests imports it. It needs
// node and the npm package installed beside it:
//
//	cd internal/testkit/hbsjs && npm ci
//
// Start skips the test when they are missing, except under CI=true, where
// it fails it. It imports only the standard library.
package hbsjs

import (
	"bufio"
	"encoding/json"
	"fmt"
	"github.com/postroom/postroom/internal/testkit/testenv"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

// InstallCommand is the command that installs what Start needs.
const InstallCommand = "cd internal/testkit/hbsjs && npm ci (node and npm: apt-get install nodejs npm)"

// Renderer is one node process rendering with handlebars.js. It is safe for
// concurrent use; renders are serialized.
type Renderer struct {
	mu   sync.Mutex
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
	dead error
}

// Result is handlebars.js's outcome for one render: its output, or the
// message of the exception it threw (Err non-empty).
type Result struct {
	Out string `json:"out"`
	Err string `json:"error"`
}

// dir is the directory of this package's files.
func dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

// Start starts node running render.js and stops it when the test ends. It
// skips tb (fails it under CI=true) when node or the handlebars package is
// not installed.
func Start(tb testing.TB) *Renderer {
	tb.Helper()
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join(dir(), "node_modules", "handlebars", "package.json"))
	}
	if err != nil {
		testenv.Missing(tb, fmt.Sprintf("handlebars.js is not installed (%v)", err), InstallCommand)
	}
	cmd := exec.Command(node, filepath.Join(dir(), "render.js"))
	cmd.Stderr = io.Discard
	in, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	r := &Renderer{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<16)}
	tb.Cleanup(func() {
		in.Close()
		_ = cmd.Wait()
	})
	return r
}

// Render renders template with data (encoded with encoding/json) in
// handlebars.js. An error means the process failed, not the template.
func (r *Renderer) Render(template string, data any) (Result, error) {
	return r.RenderPartials(template, nil, data)
}

// RenderMerged renders template in handlebars.js with the root context a
// call makes of its global_params and a recipient's params, both JSON
// objects (or null): Object.assign({}, globals, params), in which a key
// of both keeps its place among the globals with the params' value.
// partials are as RenderPartials's.
func (r *Renderer) RenderMerged(template string, partials map[string]string, globals, params json.RawMessage) (Result, error) {
	if len(globals) == 0 {
		globals = json.RawMessage("null")
	}
	if len(params) == 0 {
		params = json.RawMessage("null")
	}
	return r.send(struct {
		Template string            `json:"template"`
		Merge    bool              `json:"merge"`
		Globals  json.RawMessage   `json:"globals"`
		Params   json.RawMessage   `json:"params"`
		Partials map[string]string `json:"partials,omitempty"`
	}{template, true, globals, params, partials})
}

// RenderPartials is Render with partials, by name, as the render's
// options.partials (their sources, compiled by handlebars.js when used).
func (r *Renderer) RenderPartials(template string, partials map[string]string, data any) (Result, error) {
	return r.send(struct {
		Template string            `json:"template"`
		Data     any               `json:"data"`
		Partials map[string]string `json:"partials,omitempty"`
	}{template, data, partials})
}

// send sends one request, encoded with encoding/json, and reads its reply.
func (r *Renderer) send(req any) (Result, error) {
	line, err := json.Marshal(req)
	if err != nil {
		return Result{}, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.dead != nil {
		return Result{}, r.dead
	}
	if _, err := r.in.Write(append(line, '\n')); err != nil {
		r.dead = fmt.Errorf("hbsjs: node: %w", err)
		return Result{}, r.dead
	}
	reply, err := r.out.ReadBytes('\n')
	if err != nil {
		r.dead = fmt.Errorf("hbsjs: node: %w", err)
		return Result{}, r.dead
	}
	var res Result
	if err := json.Unmarshal(reply, &res); err != nil {
		return Result{}, fmt.Errorf("hbsjs: reply %q: %w", reply, err)
	}
	return res, nil
}
