package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/mail"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/httpapi"
	"github.com/postroom/postroom/internal/testkit/smtptest"
)

// sqliteServer is one httpapi process run without -database-url, its
// state in its folder's postroom.db.
type sqliteServer struct {
	cmd     *exec.Cmd
	url     string // the API's base URL
	bounces string // the bounce receiver's address
	stderr  *lineWriter
	exited  chan error
}

// receivingLine is the log record of the bounce receiver's address.
var receivingLine = regexp.MustCompile(`msg="receiving bounces" addr=(\S+)`)

// sqliteEnv is the environment of the processes: no
// POSTROOM_DATABASE_URL (the test's own may name PostgreSQL), and the
// unsubscribe endpoint's key.
func sqliteEnv() []string {
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, databaseEnv+"=") || strings.HasPrefix(kv, unsubscribeKeyEnv+"=")
	})
	return append(env, unsubscribeKeyEnv+"=k1:"+base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{5}, 32)))
}

// sqliteArgs are the processes' flags: the relay at relay, a bounce
// receiver, one-click unsubscribes, and an hour between a deferred
// recipient's attempts; no -database-url.
func sqliteArgs(relay string) []string {
	return []string{"-no-auth", "-listen", "127.0.0.1:0", "-smtp", relay, "-smtp-tls", "none",
		"-bounce-listen", "127.0.0.1:0", "-bounce-domain", "bounce.example.com",
		"-unsubscribe-url", "https://mail.example.com/unsubscribe/", "-outbox-backoff", "1h"}
}

// startSQLiteServer starts bin in dir with sqliteArgs and waits until it
// serves. It is stopped (SIGTERM) when the test ends, unless killed
// before.
func startSQLiteServer(t *testing.T, bin, dir, relay string) *sqliteServer {
	t.Helper()
	cmd := exec.Command(bin, sqliteArgs(relay)...)
	cmd.Dir, cmd.Env = dir, sqliteEnv()
	w := &lineWriter{addr: make(chan string, 1)}
	cmd.Stderr = w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &sqliteServer{cmd: cmd, stderr: w, exited: make(chan error, 1)}
	go func() { s.exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		err := <-s.exited
		s.exited <- err
		if t.Failed() {
			t.Logf("server log:\n%s", w.String())
		}
	})
	select {
	case a := <-w.addr:
		s.url = "http://" + a
	case err := <-s.exited:
		s.exited <- err
		t.Fatalf("httpapi exited at start: %v\n%s", err, w.String())
	}
	// The receiver's record comes before the one of serving.
	m := receivingLine.FindStringSubmatch(w.String())
	if m == nil {
		t.Fatalf("no bounce receiver's address in the log:\n%s", w.String())
	}
	s.bounces = m[1]
	return s
}

// kill ends the process with SIGKILL, as a crash or a power cut would,
// and waits until it is gone.
func (s *sqliteServer) kill(t *testing.T) {
	t.Helper()
	if err := s.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	err := <-s.exited
	s.exited <- err
}

// sqliteCall is a call from acct to the one address to, a list's when
// list is set.
func sqliteCall(to string, list bool) *postroom.Call {
	c := &postroom.Call{Key: "k", AccountID: "acct",
		Message:    postroom.Message{FromEmail: "shop@example.com", Subject: "Hello", Text: "Hello {{name}}."},
		Recipients: []postroom.Recipient{{Email: to, Name: "Ann", Params: map[string]any{"name": "Ann"}}}}
	if list {
		c.Message.Headers = append(c.Message.Headers, postroom.ListID("Shop news", "news.shop.example.com"))
	}
	return c
}

// sendOne sends call synchronously and returns its one result.
func sendOne(t *testing.T, api, path string, call *postroom.Call) postroom.Result {
	t.Helper()
	r := post(t, t.Context(), api+path, "application/json", marshal(t, call))
	if r.Status != http.StatusOK || len(r.Results) != 1 {
		t.Fatalf("%s: %d %s", path, r.Status, r.Body)
	}
	return r.Results[0]
}

// callView is GET /api/1.0/calls/{id}'s answer.
type callView struct {
	postroom.CallStatus
	Waiting []postroom.WaitingRecipient `json:"waiting"`
}

// waitCall reads the call at loc until done holds, or fails after a
// minute.
func waitCall(t *testing.T, api, loc, what string, done func(callView) bool) callView {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		var v callView
		if code := getJSON(t, api+loc, &v); code != http.StatusOK {
			t.Fatalf("GET %s: %d", loc, code)
		}
		if done(v) {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s after a minute: %+v", what, v)
		}
	}
}

// TestStateSurvivesSIGKILL runs the program as it is run with no
// database flag: its state is in ./postroom.db, one SQLite file. A hard
// bounce (a DSN to the bounce receiver), an unsubscribe (the one-click
// endpoint), a call sent later that the relay deferred, and a stored
// template are made; a second process on the same file is refused,
// naming PostgreSQL; the first is killed with SIGKILL and started again
// on the same file: the bounced address is refused, the unsubscribed one
// is refused list mail, the queued call is there and is sent once the
// relay takes it, and the template sends.
func TestStateSurvivesSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the program and runs it")
	}
	t.Parallel()
	const dead, gone, later = "dead@example.net", "gone@example.net", "later@example.net"
	var deferring atomic.Bool
	deferring.Store(true)
	relay := smtptest.NewServer(t, smtptest.Options{Faults: func(c smtptest.Command) smtptest.Fault {
		if c.Stage == smtptest.Rcpt && c.Addr == later && deferring.Load() {
			return smtptest.Fault{Code: 451, Enhanced: "4.7.1", Text: "greylisted"}
		}
		return smtptest.Fault{}
	}})
	bin := buildHTTPAPI(t)
	dir := t.TempDir()
	first := startSQLiteServer(t, bin, dir, relay.Addr())
	api := first.url

	// A hard bounce: the message to dead leaves with its VERP address,
	// and a DSN for it comes back to the receiver.
	sent := sendOne(t, api, httpapi.SendPath, sqliteCall(dead, false))
	if sent.Status != postroom.StatusSent {
		t.Fatalf("%s: %+v; want sent", dead, sent)
	}
	verp := postroom.VERP{Domain: "bounce.example.com"}.Address(sent.SendID)
	deliverDSN(t, first.bounces, false, verp, dsn(verp, dead))
	if rejects := listRejects(t, api, dead); len(rejects) != 1 || rejects[0].Reason != "hard-bounce" {
		t.Fatalf("rejects.list after the DSN: %+v; want %s hard-bounce", rejects, dead)
	}

	// An unsubscribe: the provider's one-click POST to the link of a list
	// message to gone.
	if r := sendOne(t, api, httpapi.SendPath, sqliteCall(gone, true)); r.Status != postroom.StatusSent {
		t.Fatalf("list message to %s: %+v", gone, r)
	}
	msgs := relay.Messages()
	i := slices.IndexFunc(msgs, func(m smtptest.Message) bool { return slices.Contains(m.To, gone) })
	if i < 0 {
		t.Fatalf("the relay got no message to %s", gone)
	}
	msg, err := mail.ReadMessage(bytes.NewReader(msgs[i].Data))
	if err != nil {
		t.Fatal(err)
	}
	link := strings.Trim(strings.Join(strings.Fields(msg.Header.Get("List-Unsubscribe")), ""), "<>")
	token, ok := strings.CutPrefix(link, "https://mail.example.com/unsubscribe/")
	if !ok {
		t.Fatalf("List-Unsubscribe %q", link)
	}
	resp, err := http.PostForm(api+"/unsubscribe/"+token, url.Values{"List-Unsubscribe": {"One-Click"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if rejects := listRejects(t, api, gone); resp.StatusCode != http.StatusOK || len(rejects) != 1 || rejects[0].Reason != "unsub" {
		t.Fatalf("unsubscribe POST: %d, then rejects.list %+v; want 200 and %s unsub", resp.StatusCode, rejects, gone)
	}

	// A call sent later, which the relay defers: it waits an hour for its
	// next attempt.
	_, loc := postAsync(t, api+httpapi.SendPath, marshal(t, sqliteCall(later, false)))
	waitCall(t, api, loc, "deferral", func(v callView) bool {
		return len(v.Waiting) == 1 && v.Waiting[0].State == postroom.WaitingDeferred && v.Waiting[0].NextAttempt != nil
	})

	// A stored template, published.
	tr := postTemplates(t, api+httpapi.TemplatesAddPath, marshal(t, map[string]any{"key": "k", "account_id": "acct",
		"name": "welcome", "code": "Welcome aboard, {{name}}.", "publish": true}))
	if tr.Status != http.StatusOK {
		t.Fatalf("templates.add: %d %s", tr.Status, tr.Body)
	}

	// The file is this process's: a second one is refused, naming
	// PostgreSQL for several.
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	second := exec.CommandContext(ctx, bin, sqliteArgs(relay.Addr())...)
	second.Dir, second.Env = dir, sqliteEnv()
	out, err := second.CombinedOutput()
	if ee := (*exec.ExitError)(nil); !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), "postroom.db is in use by another process") || !strings.Contains(string(out), "PostgreSQL") {
		t.Errorf("a second process on the file: %v\n%s\nwant exit status 2 saying the file is in use, naming PostgreSQL", err, out)
	}

	first.kill(t)
	if _, err := os.Stat(filepath.Join(dir, "postroom.db")); err != nil {
		t.Fatalf("the state's file: %v", err)
	}
	again := startSQLiteServer(t, bin, dir, relay.Addr())
	api = again.url

	if r := sendOne(t, api, httpapi.SendPath, sqliteCall(dead, false)); r.Status != postroom.StatusRejected || !strings.HasPrefix(r.Reason, string(postroom.ReasonHardBounce)) {
		t.Errorf("%s after the restart: %+v; want rejected, hard-bounce", dead, r)
	}
	if r := sendOne(t, api, httpapi.SendPath, sqliteCall(gone, true)); r.Status != postroom.StatusRejected || !strings.HasPrefix(r.Reason, string(postroom.ReasonUnsub)) {
		t.Errorf("list mail to %s after the restart: %+v; want rejected, unsub", gone, r)
	}
	if r := sendOne(t, api, httpapi.SendPath, sqliteCall(gone, false)); r.Status != postroom.StatusSent {
		t.Errorf("a transactional message to %s after the restart: %+v; want sent (the unsubscribe is the list's)", gone, r)
	}

	tc := sqliteCall("ann@example.net", false)
	tc.Message.Text, tc.Message.TextTemplateID = "", "welcome"
	if r := sendOne(t, api, httpapi.SendTemplatePath, tc); r.Status != postroom.StatusSent {
		t.Errorf("the stored template after the restart: %+v; want sent", r)
	}
	msgs = relay.Messages()
	if i := slices.IndexFunc(msgs, func(m smtptest.Message) bool { return slices.Contains(m.To, "ann@example.net") }); i < 0 || !bytes.Contains(msgs[i].Data, []byte("Welcome aboard, Ann.")) {
		t.Errorf("the relay got no message from the stored template")
	}

	v := waitCall(t, api, loc, "status", func(callView) bool { return true })
	if v.State == postroom.CallDone || len(v.Waiting) != 1 || v.Waiting[0].Email != later || v.Waiting[0].Attempts != 1 {
		t.Fatalf("the call sent later, after the restart: %+v; want it not done, %s waiting after 1 attempt", v, later)
	}
	deferring.Store(false)
	var retried struct {
		Retried int `json:"retried"`
	}
	rr := postTemplates(t, api+httpapi.CallsRetryPath, marshal(t, map[string]any{"key": "k", "account_id": "acct", "id": v.ID}))
	if rr.Status != http.StatusOK || json.Unmarshal(rr.Body, &retried) != nil || retried.Retried != 1 {
		t.Fatalf("calls.retry: %d %s; want 1 retried", rr.Status, rr.Body)
	}
	done := waitCall(t, api, loc, "done call", func(v callView) bool { return v.State == postroom.CallDone })
	if len(done.Results) != 1 || done.Results[0].Status != postroom.StatusSent {
		t.Errorf("the call sent later: %+v; want its recipient sent", done)
	}
	if !slices.ContainsFunc(relay.Messages(), func(m smtptest.Message) bool { return slices.Contains(m.To, later) }) {
		t.Errorf("the relay got no message to %s", later)
	}
}
