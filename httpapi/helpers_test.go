package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/testkit/apitest"
	"github.com/postroom/postroom/postroomtest"
	"github.com/postroom/postroom/templatestore"
)

// The client side of the tests (internal/testkit/apitest), under short names.
var (
	post          = apitest.Post
	do            = apitest.Do
	tryDo         = apitest.TryDo
	marshal       = apitest.Marshal
	smallCall     = apitest.SmallCall
	byMsg         = apitest.ByMsg
	postKeyed     = apitest.PostKeyed
	mustPostKeyed = apitest.MustPostKeyed
)

type (
	response      = apitest.Response
	keyedResponse = apitest.KeyedResponse
)

var sendIDPattern = regexp.MustCompile(`^[0-9a-f]{32}$`)

// serve serves h on 127.0.0.1:0 with an http.Server whose read timeout is
// read (0: none), and returns its base URL; the server is closed in
// Cleanup, once its requests have ended.
func serve(tb testing.TB, h http.Handler, read time.Duration) string {
	tb.Helper()
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ReadTimeout = read
	srv.Start()
	tb.Cleanup(srv.Close)
	return srv.URL
}

// startMailer serves a Mailer over tr with the given Options (NoAuth
// unless set) and a Handler of default Options.
func startMailer(tb testing.TB, tr postroom.Transport, opts postroom.Options) (url string, log *apitest.LogRecorder) {
	tb.Helper()
	return startHandler(tb, tr, opts, Options{})
}

// startHandler serves a Mailer over tr with the given Options (NoAuth
// unless set) and a Handler of ho, logging to the returned recorder.
// NoTemplateStore is set when the Mailer has no store.
func startHandler(tb testing.TB, tr postroom.Transport, opts postroom.Options, ho Options) (url string, log *apitest.LogRecorder) {
	tb.Helper()
	logger, log := apitest.NewLogger()
	if opts.Auth == nil {
		opts.Auth = postroom.NoAuth{}
	}
	m, err := postroom.New(tr, opts)
	if err != nil {
		tb.Fatal(err)
	}
	ho.Logger = logger
	ho.NoTemplateStore = opts.Templates == nil
	h, err := New(m, ho)
	if err != nil {
		tb.Fatal(err)
	}
	return serve(tb, h, 0), log
}

// memoryTemplates returns a store holding files: "<account>/<id>" → source.
func memoryTemplates(t testing.TB, files map[string]string) *templatestore.Memory {
	t.Helper()
	s := templatestore.NewMemory()
	for name, src := range files {
		account, id, _ := strings.Cut(name, "/")
		if err := s.Put(account, id, src); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// readEML reads the outbox file of one result back with postroomtest.Parse
// (which checks its lines) and returns it and the decoded text of its
// text/plain and text/html parts.
func readEML(t *testing.T, outbox string, r postroom.Result) (*postroomtest.Message, map[string]string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(outbox, r.SendID+".eml"))
	if err != nil {
		t.Fatalf("%s: %v", r.Email, err)
	}
	msg := postroomtest.Parse(t, data)
	parts := map[string]string{}
	for _, p := range msg.Parts {
		if mt := p.Type(); strings.HasPrefix(mt, "text/") {
			parts[mt] = string(p.Body)
		}
	}
	return msg, parts
}

// errIO is what a broken template store returns.
var errIO = errors.New("read /srv/templates/acct/order.html: input/output error")

// brokenStore is a TemplateStore whose disk fails.
type brokenStore struct{}

func (brokenStore) Template(context.Context, string, string) (string, error) {
	return "", fmt.Errorf("templatestore: %w", errIO)
}

// heldTransport returns a Transport whose Send signals started and then
// holds the message until release is closed (accepting it) or its ctx is
// done: a call kept in flight for as long as a test needs, with no timing.
func heldTransport() (tr postroom.TransportFunc, started, release chan struct{}) {
	started, release = make(chan struct{}, 1), make(chan struct{})
	tr = func(ctx context.Context, _ *postroom.Envelope) error {
		started <- struct{}{}
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return tr, started, release
}

// blockingTransport blocks every Send until ctx is done and reports ctx's
// error; started receives once per Send that began.
type blockingTransport struct {
	started chan struct{}
	ended   chan error
}

func newBlockingTransport(n int) *blockingTransport {
	return &blockingTransport{started: make(chan struct{}, n), ended: make(chan error, n)}
}

func (b *blockingTransport) Send(ctx context.Context, _ *postroom.Envelope) error {
	b.started <- struct{}{}
	<-ctx.Done()
	b.ended <- ctx.Err()
	return ctx.Err()
}

// halfTransport accepts the first accept messages and blocks every later
// one until its ctx is done; it records the send id of each message it
// accepted, and started receives once per blocked Send.
type halfTransport struct {
	accept  int
	mu      sync.Mutex
	sent    map[string]string // recipient → send id
	started chan struct{}
	ended   chan error
}

func (h *halfTransport) Send(ctx context.Context, env *postroom.Envelope) error {
	h.mu.Lock()
	if len(h.sent) < h.accept {
		h.sent[env.To[0]] = env.SendID
		h.mu.Unlock()
		return nil
	}
	h.mu.Unlock()
	h.started <- struct{}{}
	<-ctx.Done()
	h.ended <- ctx.Err()
	return ctx.Err()
}
