package postroom_test

import (
	"encoding/base64"
	"regexp"
	"runtime"
	"testing"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/postroomtest"
	"github.com/postroom/postroom/transport"
)

// sendIDPattern is the form of every send_id: 32 lower-case hex digits.
var sendIDPattern = regexp.MustCompile(`^[0-9a-f]{32}$`)

// newMailer is postroom.New with NoAuth when opts has no Auth; it fails
// the test on an error.
func newMailer(t testing.TB, tr postroom.Transport, opts postroom.Options) *postroom.Mailer {
	t.Helper()
	if opts.Auth == nil {
		opts.Auth = postroom.NoAuth{}
	}
	m, err := postroom.New(tr, opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return m
}

// smallCall is a minimal valid message.send call.
func smallCall(recipients ...string) *postroom.Call {
	c := &postroom.Call{
		Key: "k", AccountID: "acct",
		Message: postroom.Message{
			FromName: "Shop", FromEmail: "orders@shop.example.com",
			Subject: "Hello {{name}}", Text: "Hi {{name}}!", HTML: "<p>Hi {{name}}!</p>",
		},
	}
	for _, r := range recipients {
		c.Recipients = append(c.Recipients, postroom.Recipient{Email: r, Params: map[string]any{"name": "Ann"}})
	}
	return c
}

// mustB64 decodes standard base64 or fails the test.
func mustB64(t testing.TB, s string) []byte {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sendOne sends call through a fresh mailer with a memory transport and
// returns the first recipient's result and, if it was sent, its message
// parsed.
func sendOne(t *testing.T, call *postroom.Call) (postroom.Result, *postroomtest.Message) {
	t.Helper()
	mem := transport.NewMemory()
	results, err := newMailer(t, mem, postroom.Options{}).Send(t.Context(), call)
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	if results[0].Status != postroom.StatusSent {
		return results[0], nil
	}
	env, ok := mem.Envelope(results[0].SendID)
	if !ok {
		t.Fatalf("no message recorded")
	}
	return results[0], postroomtest.Parse(t, env.Data)
}

// waitGoroutines waits for the goroutine count to come back to before. A
// worker ends just after Wait returns, with no event to wait for, so it
// polls; the deadline only bounds a failure and is far beyond any
// scheduling delay on a loaded machine.
func waitGoroutines(t *testing.T, before int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines left running after Send returned (%d before)", runtime.NumGoroutine()-before, before)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// fixedRand is a deterministic byte source for Options.Rand.
type fixedRand struct{ b byte }

func (r *fixedRand) Read(p []byte) (int, error) {
	for i := range p {
		r.b = r.b*31 + 7
		p[i] = r.b
	}
	return len(p), nil
}
