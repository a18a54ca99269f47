package main

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/idempotency"
	"github.com/postroom/postroom/internal/testkit/pgtest"
	"github.com/postroom/postroom/internal/testkit/smtptest"
	"github.com/postroom/postroom/sqldb/pgxdb"
)

// gate holds chosen messages at the SMTP server's end-of-data reply: the
// server has the whole message and the client waits for the verdict, so
// a call is mid-way for as long as the test needs, with no timing.
type gate struct {
	mu      sync.Mutex
	held    map[string]bool // first recipients whose messages wait
	open    chan struct{}   // closed: they go on
	reached chan string     // each held message, as it arrives
}

func newGate() *gate {
	return &gate{held: map[string]bool{}, open: make(chan struct{}), reached: make(chan string, 256)}
}

// hold makes the messages to addrs wait until release is called.
func (g *gate) hold(addrs ...string) (release func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.held = map[string]bool{}
	for _, a := range addrs {
		g.held[a] = true
	}
	open := make(chan struct{})
	g.open = open
	var once sync.Once
	return func() { once.Do(func() { close(open) }) }
}

// fault is the server's script (smtptest.Options.Faults).
func (g *gate) fault(c smtptest.Command) smtptest.Fault {
	if c.Stage != smtptest.EndOfData {
		return smtptest.Fault{}
	}
	g.mu.Lock()
	held, open := g.held[c.Addr], g.open
	g.mu.Unlock()
	if held {
		g.reached <- c.Addr
		<-open
	}
	return smtptest.Fault{}
}

// instance is one httpapi process.
type instance struct {
	cmd    *exec.Cmd
	url    string
	stderr *lineWriter
}

// lineWriter keeps a process's standard error and reports the address of
// its "serving" record.
type lineWriter struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	partial []byte
	addr    chan string
}

func (w *lineWriter) Write(p []byte) (int, error) {
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
		if strings.Contains(line, "msg=serving") {
			for _, f := range strings.Fields(line) {
				if a, ok := strings.CutPrefix(f, "addr="); ok {
					w.addr <- a
				}
			}
		}
	}
}

func (w *lineWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// buildHTTPAPI builds this program into a temporary folder.
func buildHTTPAPI(t *testing.T) string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to build the program: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "httpapi")
	build := exec.CommandContext(t.Context(), gobin, "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// startInstance starts bin on a free port of 127.0.0.1, delivering to
// smtpAddr and keeping its records in the database dsn. It is stopped
// (SIGTERM) when the test ends, unless killed before.
func startInstance(t *testing.T, bin, smtpAddr, dsn string) *instance {
	t.Helper()
	cmd := exec.Command(bin, "-no-auth", "-listen", "127.0.0.1:0", "-smtp", smtpAddr, "-smtp-tls", "none")
	cmd.Env = append(os.Environ(), databaseEnv+"="+dsn)
	w := &lineWriter{addr: make(chan string, 1)}
	cmd.Stderr = w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	inst := &instance{cmd: cmd, stderr: w}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		<-exited
		if t.Failed() {
			t.Logf("instance %s log:\n%s", inst.url, w.String())
		}
	})
	select {
	case a := <-w.addr:
		inst.url = "http://" + a
	case err := <-exited:
		exited <- err
		t.Fatalf("httpapi exited at start: %v\n%s", err, w.String())
	}
	return inst
}

// kill ends the process with SIGKILL, as a crash would.
func (in *instance) kill(t *testing.T) {
	t.Helper()
	if err := in.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
}

// idemCall is a message.send call to the addresses prefix-0 … prefix-(n-1).
func idemCall(t *testing.T, prefix string, n int) (body []byte, addrs []string) {
	call := &postroom.Call{
		Key: "k", AccountID: "acct",
		Message: postroom.Message{FromEmail: "shop@example.com", Subject: "Order {{n}}", Text: "Your order {{n}} has shipped."},
	}
	for i := range n {
		a := fmt.Sprintf("%s-%d@example.org", prefix, i)
		addrs = append(addrs, a)
		call.Recipients = append(call.Recipients, postroom.Recipient{Email: a, Params: map[string]any{"n": i}})
	}
	return marshal(t, call), addrs
}

// TestMultiInstance runs three httpapi processes on one PostgreSQL and one
// SMTP server, and checks on the server's ledger that idempotency keys
// hold across them: the same call sent to all three at once is sent once,
// and a call whose instance is killed mid-way, retried on another, sends
// nothing twice except to recipients reported unknown, with one final
// result per recipient.
func TestMultiInstance(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the program and runs instances of it")
	}
	dsn := pgtest.DSN(t)
	bin := buildHTTPAPI(t)
	g := newGate()
	srv := smtptest.NewServer(t, smtptest.Options{Faults: g.fault, DiscardData: true})
	defer g.hold()() // let any message still held go before the server stops
	var insts []*instance
	for range 3 {
		insts = append(insts, startInstance(t, bin, srv.Addr(), dsn))
	}
	db, err := pgxpool.New(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	store, err := idempotency.NewSQL(pgxdb.New(db), idempotency.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var all []postroom.Result // every recipient's final result, for the ledger

	t.Run("AllAtOnce", func(t *testing.T) {
		body, addrs := idemCall(t, "once", 5)
		release := g.hold(addrs[0])
		defer release()
		answers := make(chan *keyedResponse, len(insts))
		for _, in := range insts {
			go func() {
				r, err := postKeyed(t.Context(), in.url+"/api/1.0/message.send", body, "order-1")
				if err != nil {
					r = &keyedResponse{Response: response{Body: []byte(err.Error())}}
				}
				answers <- r
			}()
		}
		<-g.reached // one instance is sending, held mid-call
		var got []*keyedResponse
		for len(got) < len(insts)-1 {
			got = append(got, <-answers)
		}
		release()
		got = append(got, <-answers)
		var ok *keyedResponse
		inProgress := 0
		for _, r := range got {
			switch {
			case r.Status == http.StatusOK && ok == nil:
				ok = r
			case r.Status == http.StatusConflict && r.Error.Code == "idempotency_in_progress" && r.RetryAfter != "":
				inProgress++
			default:
				t.Errorf("answer %d %s", r.Status, r.Body)
			}
		}
		if ok == nil || inProgress != len(insts)-1 {
			t.Fatalf("%d answers 200 and %d in progress; want one 200 and %d idempotency_in_progress", len(got)-inProgress, inProgress, len(insts)-1)
		}
		// Each instance now answers the recorded results.
		for _, in := range insts {
			r := mustPostKeyed(t, in.url+"/api/1.0/message.send", body, "order-1")
			if r.Status != http.StatusOK || !bytes.Equal(r.Body, ok.Body) {
				t.Errorf("replay on %s: %d %s; want %s", in.url, r.Status, r.Body, ok.Body)
			}
		}
		for _, r := range ok.Results {
			if r.Status != postroom.StatusSent {
				t.Errorf("%s: %s %s, want sent", r.Email, r.Status, r.Reason)
			}
		}
		all = append(all, ok.Results...)
	})

	t.Run("KilledMidCall", func(t *testing.T) {
		const n, free = 12, 3
		body, addrs := idemCall(t, "killed", n)
		// The first free recipients go through; the others wait at the
		// server until the instance is dead.
		release := g.hold(addrs[free:]...)
		defer release()
		victim := insts[0]
		go func() {
			// The answer never comes: the process dies first.
			_, _ = postKeyed(t.Context(), victim.url+"/api/1.0/message.send", body, "order-2")
		}()
		reached := map[string]bool{<-g.reached: true}
		victim.kill(t)
		release()
		// Messages that reached the server before the kill are the ones
		// held there; drain those that arrived meanwhile.
	drain:
		for {
			select {
			case a := <-g.reached:
				reached[a] = true
			default:
				break drain
			}
		}
		// The server notices the dead connection and frees the key.
		if err := store.Wait(t.Context(), idempotency.Key{AccountID: "acct", Key: "order-2"}); err != nil {
			t.Fatal(err)
		}
		retry := mustPostKeyed(t, insts[1].url+"/api/1.0/message.send", body, "order-2")
		if retry.Status != http.StatusOK || len(retry.Results) != n {
			t.Fatalf("retry: %d %s", retry.Status, retry.Body)
		}
		unknown := 0
		for i, r := range retry.Results {
			switch {
			case r.Email != addrs[i]:
				t.Errorf("result %d is for %s, want %s", i, r.Email, addrs[i])
			case r.Status == postroom.StatusUnknown:
				unknown++
			case r.Status != postroom.StatusSent:
				t.Errorf("%s: %s %s, want sent or unknown", r.Email, r.Status, r.Reason)
			}
		}
		for a := range reached {
			if i := indexOf(addrs, a); i < 0 || retry.Results[i].Status != postroom.StatusUnknown {
				t.Errorf("%s was at the server when the instance died, reported %+v; want unknown", a, retry.Results[max(i, 0)])
			}
		}
		if unknown == 0 || unknown == n {
			t.Errorf("%d of %d recipients unknown; want some, not all", unknown, n)
		}
		again := mustPostKeyed(t, insts[2].url+"/api/1.0/message.send", body, "order-2")
		if again.Status != http.StatusOK || !bytes.Equal(again.Body, retry.Body) {
			t.Errorf("third call: %d %s; want %s", again.Status, again.Body, retry.Body)
		}
		all = append(all, retry.Results...)
	})

	// Sent: exactly one message; unknown: at most one; nothing else.
	smtptest.CheckLedger(t, srv, all)
}

func indexOf(addrs []string, a string) int {
	for i, x := range addrs {
		if x == a {
			return i
		}
	}
	return -1
}
