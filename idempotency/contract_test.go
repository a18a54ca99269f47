package idempotency

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/testkit/dbtest"
)

// harness is one Store implementation under the contract tests.
type harness struct {
	// store returns a new, empty store with opts.
	store func(t *testing.T, opts Options) Store
	// kill makes c's holder die as a crashed process does: the store lets
	// the key go, and c's later writes must be refused.
	kill func(t *testing.T, c Claim)
}

// contract is the table of cases every Store runs, through Run.
var contract = []struct {
	name string
	test func(t *testing.T, h harness)
}{
	{"Replay", testReplay},
	{"Conflict", testConflict},
	{"AccountScope", testAccountScope},
	{"InProgress", testInProgress},
	{"WaitCanceled", testWaitCanceled},
	{"RefusedRecordsNothing", testRefusedRecordsNothing},
	{"Crash", testCrash},
	{"OpenResultsRetried", testOpenResultsRetried},
	{"Retention", testRetention},
	{"Concurrent", testConcurrent},
}

// TestContract runs the contract on every Store: Memory, and SQL on each
// engine.
func TestContract(t *testing.T) {
	t.Run("memory", func(t *testing.T) { runContract(t, memoryHarness()) })
	for _, e := range dbtest.Engines() {
		t.Run(e.Name, func(t *testing.T) { runContract(t, sqlHarness(e)) })
	}
}

// runContract runs the contract table against h.
func runContract(t *testing.T, h harness) {
	for _, c := range contract {
		t.Run(c.name, func(t *testing.T) { c.test(t, h) })
	}
}

// relay is a transport that counts the messages per address, and lets a
// test hold or fail chosen ones through hook.
type relay struct {
	mu   sync.Mutex
	sent map[string]int
	hook func(ctx context.Context, addr string) error // nil accepts everything
}

func newRelay() *relay { return &relay{sent: map[string]int{}} }

func (r *relay) Send(ctx context.Context, env *postroom.Envelope) error {
	if r.hook != nil {
		if err := r.hook(ctx, env.To[0]); err != nil {
			return err
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sent[env.To[0]]++
	return nil
}

// count is how many messages addr got.
func (r *relay) count(addr string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sent[addr]
}

// total is how many messages were sent.
func (r *relay) total() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, c := range r.sent {
		n += c
	}
	return n
}

func newMailer(t *testing.T, tr postroom.Transport, concurrency int) *postroom.Mailer {
	t.Helper()
	m, err := postroom.New(tr, postroom.Options{Auth: postroom.NoAuth{}, Concurrency: concurrency})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// newCall is a valid message.send call to recipients.
func newCall(recipients ...string) *postroom.Call {
	c := &postroom.Call{
		Key: "api-key", AccountID: "acct",
		Message: postroom.Message{
			FromEmail: "orders@shop.example.com",
			Subject:   "Hello {{name}}", Text: "Hi {{name}}!",
		},
	}
	for _, r := range recipients {
		c.Recipients = append(c.Recipients, postroom.Recipient{Email: r, Params: map[string]any{"name": "Ann"}})
	}
	return c
}

// addrs are n distinct recipient addresses.
func addrs(n int) []string {
	a := make([]string, n)
	for i := range a {
		a[i] = fmt.Sprintf("r%d@example.org", i)
	}
	return a
}

// sameResults fails unless got and want agree on every recorded field.
func sameResults(t *testing.T, got, want []postroom.Result) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d results, want %d", len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.Email != w.Email || g.Status != w.Status || g.Reason != w.Reason || g.Code != w.Code || g.SendID != w.SendID {
			t.Errorf("result %d = %+v, want %+v", i, g, w)
		}
	}
}

func newStore(t *testing.T, h harness) Store {
	return h.store(t, Options{})
}

func testReplay(t *testing.T, h harness) {
	s, tr := newStore(t, h), newRelay()
	m := newMailer(t, tr, 0)
	call := newCall("a@example.org", "not-an-address", "b@example.org", "a@example.org")
	first, err := Run(t.Context(), s, m, "k1", postroom.OpSend, call)
	if err != nil {
		t.Fatal(err)
	}
	if first[0].Status != postroom.StatusSent || first[1].Code != postroom.ReasonInvalidEmail || first[3].Code != postroom.ReasonDuplicate {
		t.Fatalf("first call: %+v", first)
	}
	// The same payload in another body: a copy, its params rebuilt.
	again := newCall("a@example.org", "not-an-address", "b@example.org", "a@example.org")
	second, err := Run(t.Context(), s, m, "k1", postroom.OpSend, again)
	if err != nil {
		t.Fatal(err)
	}
	sameResults(t, second, first)
	if tr.total() != 2 || tr.count("a@example.org") != 1 {
		t.Errorf("%d messages sent (a: %d), want 2 (a: 1)", tr.total(), tr.count("a@example.org"))
	}
}

func testConflict(t *testing.T, h harness) {
	s, tr := newStore(t, h), newRelay()
	m := newMailer(t, tr, 0)
	if _, err := Run(t.Context(), s, m, "k1", postroom.OpSend, newCall("a@example.org")); err != nil {
		t.Fatal(err)
	}
	for name, change := range map[string]func(*postroom.Call){
		"subject": func(c *postroom.Call) { c.Message.Subject = "Other" },
		"recipients": func(c *postroom.Call) {
			c.Recipients = append(c.Recipients, postroom.Recipient{Email: "b@example.org"})
		},
		"params":  func(c *postroom.Call) { c.Recipients[0].Params["name"] = "Bob" },
		"api key": func(c *postroom.Call) { c.Key = "other-key" },
	} {
		call := newCall("a@example.org")
		change(call)
		if res, err := Run(t.Context(), s, m, "k1", postroom.OpSend, call); !errors.Is(err, ErrConflict) || res != nil {
			t.Errorf("%s changed: %v, %v; want ErrConflict and no results", name, res, err)
		}
	}
	if tr.total() != 1 {
		t.Errorf("%d messages sent, want 1", tr.total())
	}
}

func testAccountScope(t *testing.T, h harness) {
	s, tr := newStore(t, h), newRelay()
	m := newMailer(t, tr, 0)
	for _, account := range []string{"acct", "other"} {
		call := newCall("a@example.org")
		call.AccountID = account
		res, err := Run(t.Context(), s, m, "k1", postroom.OpSend, call)
		if err != nil || res[0].Status != postroom.StatusSent {
			t.Fatalf("account %s: %v, %v", account, res, err)
		}
	}
	if got := tr.count("a@example.org"); got != 2 {
		t.Errorf("a got %d messages, want one per account", got)
	}
}

// holdAt makes tr hold the message to addr until the returned release is
// called; reached is closed when the message is held.
func holdAt(tr *relay, addr string) (reached <-chan struct{}, release func()) {
	r, let := make(chan struct{}), make(chan struct{})
	var once sync.Once
	tr.hook = func(ctx context.Context, a string) error {
		if a == addr {
			once.Do(func() { close(r) })
			<-let
		}
		return nil
	}
	var rel sync.Once
	return r, func() { rel.Do(func() { close(let) }) }
}

func testInProgress(t *testing.T, h harness) {
	s, tr := newStore(t, h), newRelay()
	m := newMailer(t, tr, 0)
	reached, release := holdAt(tr, "a@example.org")
	defer release()
	call := newCall("a@example.org", "b@example.org")
	done := make(chan error, 1)
	go func() {
		_, err := Run(t.Context(), s, m, "k1", postroom.OpSend, call)
		done <- err
	}()
	<-reached
	if res, err := Run(t.Context(), s, m, "k1", postroom.OpSend, call); !errors.Is(err, ErrInProgress) || res != nil {
		t.Errorf("second call while the first runs: %v, %v; want ErrInProgress", res, err)
	}
	// Another payload is in progress too: the record is not readable yet.
	if _, err := Run(t.Context(), s, m, "k1", postroom.OpSend, newCall("c@example.org")); !errors.Is(err, ErrInProgress) {
		t.Errorf("another payload while the first runs: %v; want ErrInProgress", err)
	}
	waited := make(chan error, 1)
	go func() { waited <- s.Wait(t.Context(), Key{AccountID: "acct", Key: "k1"}) }()
	release()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := <-waited; err != nil {
		t.Fatalf("Wait: %v", err)
	}
	if _, err := Run(t.Context(), s, m, "k1", postroom.OpSend, call); err != nil {
		t.Fatalf("after the first call: %v", err)
	}
	if tr.count("a@example.org") != 1 || tr.count("b@example.org") != 1 {
		t.Errorf("sent %v, want one each", tr.sent)
	}
	// Wait on a key nobody holds returns at once.
	if err := s.Wait(t.Context(), Key{AccountID: "acct", Key: "free"}); err != nil {
		t.Errorf("Wait on a free key: %v", err)
	}
}

// testWaitCanceled: Wait on a held key returns ctx's error when ctx
// ends, and leaves nothing held: once the holder releases the key, a
// Claim takes it.
func testWaitCanceled(t *testing.T, h harness) {
	s := newStore(t, h)
	k := Key{AccountID: "acct", Key: "k1"}
	c, err := s.Claim(t.Context(), k, Hash{1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	waited := make(chan error, 1)
	go func() { waited <- s.Wait(ctx, k) }()
	cancel()
	if err := <-waited; !errors.Is(err, context.Canceled) {
		t.Errorf("Wait on a held key, canceled: %v; want context.Canceled", err)
	}
	if _, err := s.Claim(t.Context(), k, Hash{1}); !errors.Is(err, ErrInProgress) {
		t.Errorf("Claim while the first holds the key: %v; want ErrInProgress", err)
	}
	if err := c.Release(t.Context()); err != nil {
		t.Fatal(err)
	}
	c, err = s.Claim(t.Context(), k, Hash{2})
	if err != nil {
		t.Fatalf("Claim after the holder released the key: %v", err)
	}
	if err := c.Release(t.Context()); err != nil {
		t.Fatal(err)
	}
}

func testRefusedRecordsNothing(t *testing.T, h harness) {
	s, tr := newStore(t, h), newRelay()
	m := newMailer(t, tr, 0)
	bad := newCall("a@example.org")
	bad.Message.FromEmail = "nobody"
	var ve *postroom.ValidationError
	if res, err := Run(t.Context(), s, m, "k1", postroom.OpSend, bad); !errors.As(err, &ve) || res != nil {
		t.Fatalf("invalid call: %v, %v; want a *ValidationError", res, err)
	}
	// The key is free for another payload: nothing was recorded.
	res, err := Run(t.Context(), s, m, "k1", postroom.OpSend, newCall("a@example.org"))
	if err != nil || res[0].Status != postroom.StatusSent {
		t.Fatalf("the corrected call: %v, %v", res, err)
	}
}

// spy records the claims its Store hands out.
type spy struct {
	Store
	claims chan Claim
}

func (s *spy) Claim(ctx context.Context, k Key, h Hash) (Claim, error) {
	c, err := s.Store.Claim(ctx, k, h)
	if err == nil {
		s.claims <- c
	}
	return c, err
}

// testCrash: the first call's holder dies while recipient 1's message is
// with the transport. The retry replays recipient 0, reports 1 unknown
// without sending it again, and sends 2 and 3; the dead holder, still
// running, can record nothing more and sends nothing more.
func testCrash(t *testing.T, h harness) {
	s := &spy{Store: newStore(t, h), claims: make(chan Claim, 2)}
	tr := newRelay()
	m := newMailer(t, tr, 1) // one worker: recipients go in order
	reached, release := holdAt(tr, "r1@example.org")
	defer release()
	call := newCall(addrs(4)...)
	type outcome struct {
		res []postroom.Result
		err error
	}
	zombie := make(chan outcome, 1)
	go func() {
		res, err := Run(t.Context(), s, m, "k1", postroom.OpSend, call)
		zombie <- outcome{res, err}
	}()
	first := <-s.claims
	<-reached
	h.kill(t, first)
	if err := s.Wait(t.Context(), Key{AccountID: "acct", Key: "k1"}); err != nil {
		t.Fatal(err)
	}

	retry, err := Run(t.Context(), s, m, "k1", postroom.OpSend, call)
	<-s.claims
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		status postroom.Status
		code   postroom.ReasonCode
	}{{postroom.StatusSent, ""}, {postroom.StatusUnknown, postroom.ReasonInterrupted}, {postroom.StatusSent, ""}, {postroom.StatusSent, ""}}
	for i, w := range want {
		if r := retry[i]; r.Status != w.status || r.Code != w.code || r.SendID == "" || r.Email != call.Recipients[i].Email {
			t.Errorf("retry: recipient %d = %+v, want %s %q with a send id", i, r, w.status, w.code)
		}
	}

	// The dead holder resumes: its transport returns, and it must neither
	// record nor send anything more.
	release()
	z := <-zombie
	if !errors.Is(z.err, ErrStore) {
		t.Errorf("the dead holder's call: err = %v, want ErrStore (its writes refused)", z.err)
	}
	for i, a := range addrs(4) {
		if n := tr.count(a); n != 1 {
			t.Errorf("recipient %d got %d messages, want 1", i, n)
		}
	}
	again, err := Run(t.Context(), s, m, "k1", postroom.OpSend, call)
	<-s.claims
	if err != nil {
		t.Fatal(err)
	}
	sameResults(t, again, retry)
}

// testOpenResultsRetried: a call whose ctx ends mid-way leaves the
// recipients it never handed over open; a retry with the key sends them,
// and only them.
func testOpenResultsRetried(t *testing.T, h harness) {
	s, tr := newStore(t, h), newRelay()
	m := newMailer(t, tr, 1)
	ctx, cancel := context.WithCancel(t.Context())
	tr.hook = func(_ context.Context, addr string) error {
		if addr == "r1@example.org" {
			cancel() // the client gives up while r1 is being sent
		}
		return nil
	}
	call := newCall(addrs(4)...)
	first, err := Run(ctx, s, m, "k1", postroom.OpSend, call)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("first call: err = %v, want context.Canceled", err)
	}
	if first[1].Status != postroom.StatusSent || first[2].Code != postroom.ReasonCanceled {
		t.Fatalf("first call: %+v", first)
	}
	tr.hook = nil
	retry, err := Run(t.Context(), s, m, "k1", postroom.OpSend, call)
	if err != nil {
		t.Fatal(err)
	}
	sameResults(t, retry[:2], first[:2])
	for i, a := range addrs(4) {
		if retry[i].Status != postroom.StatusSent || tr.count(a) != 1 {
			t.Errorf("recipient %d: %+v, %d messages; want sent once", i, retry[i], tr.count(a))
		}
	}
}

// testRetention: past the window a key is free again, whatever the
// payload, and DeleteExpired drops the record.
func testRetention(t *testing.T, h harness) {
	var mu sync.Mutex
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return now
	}
	advance := func(d time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		now = now.Add(d)
	}
	s, tr := h.store(t, Options{Retention: time.Hour, Now: clock}), newRelay()
	m := newMailer(t, tr, 0)
	if _, err := Run(t.Context(), s, m, "k1", postroom.OpSend, newCall("a@example.org")); err != nil {
		t.Fatal(err)
	}
	advance(59 * time.Minute)
	if _, err := Run(t.Context(), s, m, "k1", postroom.OpSend, newCall("b@example.org")); !errors.Is(err, ErrConflict) {
		t.Fatalf("within the window: %v, want ErrConflict", err)
	}
	if n, err := s.DeleteExpired(t.Context(), clock().Add(-time.Hour)); err != nil || n != 0 {
		t.Fatalf("DeleteExpired within the window: %d, %v; want 0", n, err)
	}
	advance(time.Minute)
	if _, err := Run(t.Context(), s, m, "k1", postroom.OpSend, newCall("b@example.org")); err != nil {
		t.Fatalf("past the window: %v, want a new call", err)
	}
	if tr.count("b@example.org") != 1 {
		t.Errorf("b got %d messages, want 1", tr.count("b@example.org"))
	}
	// The new record is from now: one hour on, it goes.
	advance(time.Hour + time.Minute)
	if n, err := s.DeleteExpired(t.Context(), clock().Add(-time.Hour)); err != nil || n != 1 {
		t.Fatalf("DeleteExpired: %d, %v; want 1", n, err)
	}
	if _, err := Run(t.Context(), s, m, "k1", postroom.OpSend, newCall("c@example.org")); err != nil {
		t.Fatalf("after DeleteExpired: %v", err)
	}
}

// testConcurrent: calls with one key at once send one message per
// recipient; every other call is answered ErrInProgress or the replay.
func testConcurrent(t *testing.T, h harness) {
	s, tr := newStore(t, h), newRelay()
	m := newMailer(t, tr, 4)
	call := newCall(addrs(20)...)
	const callers = 8
	var wg sync.WaitGroup
	results := make([][]postroom.Result, callers)
	errs := make([]error, callers)
	for i := range callers {
		wg.Go(func() { results[i], errs[i] = Run(t.Context(), s, m, "k1", postroom.OpSend, call) })
	}
	wg.Wait()
	var ran []postroom.Result
	for i, err := range errs {
		switch {
		case errors.Is(err, ErrInProgress):
		case err != nil:
			t.Fatalf("caller %d: %v", i, err)
		case ran == nil:
			ran = results[i]
		default:
			sameResults(t, results[i], ran)
		}
	}
	if ran == nil {
		t.Fatal("no caller got results")
	}
	for i, a := range addrs(20) {
		if n := tr.count(a); n != 1 || ran[i].Status != postroom.StatusSent {
			t.Errorf("recipient %d: %d messages, %+v; want sent once", i, n, ran[i])
		}
	}
}
