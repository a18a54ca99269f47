package console_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/console"
	"github.com/postroom/postroom/events"
	"github.com/postroom/postroom/preview"
	"github.com/postroom/postroom/suppression"
	"github.com/postroom/postroom/templatestore"
)

// The account of the fixture, and another one whose data the console
// must never show to it.
const (
	account = "acct-support"
	other   = "acct-other"
)

// Ann's three password resets: a direct call that was sent, a call sent
// later that was greylisted once then sent, and one that bounced.
const (
	ann          = "ann@example.org"
	sentID       = "0a1b2c3d4e5f60718293a4b5c6d7e8f9"
	deferredID   = "1b2c3d4e5f60718293a4b5c6d7e8f90a"
	bouncedID    = "2c3d4e5f60718293a4b5c6d7e8f90a1b"
	hostileID    = "3d4e5f60718293a4b5c6d7e8f90a1b2c"
	otherID      = "4e5f60718293a4b5c6d7e8f90a1b2c3d"
	greylisted   = "451 4.7.1 <ann@example.org>: greylisted, try again in 5 minutes"
	mailboxGone  = "550 5.1.1 <ann@example.org>: mailbox disabled"
	hostileHTML  = `<img src=x onerror="document.title='pwned'">`
	hostileEmail = `"<img/src=x/onerror=document.title=1>"@example.com`
	hostileText  = `<script>document.title='pwned'</script>`
)

// t0 is when the fixture's story starts.
var t0 = time.Date(2026, 12, 7, 9, 14, 0, 0, time.UTC)

// fixture is a console over memory stores holding Ann's story, a hostile
// message, a suppression list and templates.
type fixture struct {
	h         *console.Handler
	activity  *events.Memory
	list      *suppression.Memory
	templates *templatestore.Memory
	srv       *httptest.Server // the console at prefix
}

// prefix is where the tests mount the console, as an application does.
const prefix = "/admin/console"

// newFixture returns the fixture; change lets a test adjust the Options.
func newFixture(t *testing.T, change func(*console.Options)) *fixture {
	t.Helper()
	f := &fixture{templates: templatestore.NewMemory()}
	var err error
	if f.activity, err = events.NewMemory(events.MemoryOptions{Now: func() time.Time { return t0 }}); err != nil {
		t.Fatal(err)
	}
	if f.list, err = suppression.NewMemory(suppression.Options{}); err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	ev := func(typ postroom.EventType, id, email, reason, status, diag string, at time.Duration) {
		f.activity.OnEvent(ctx, postroom.Event{Type: typ, SendID: id, AccountID: account, Email: email, Reason: reason, Status: status, Diagnostic: diag, At: t0.Add(at)})
	}
	ev(postroom.EventSend, sentID, ann, "", "", "250 2.0.0 Ok: queued as 4dQ1", 0)
	ev(postroom.EventDeferral, deferredID, ann, "soft-bounce", "4.7.1", greylisted, time.Hour)
	ev(postroom.EventSend, deferredID, ann, "", "", "250 2.0.0 Ok: queued as 4dR7", time.Hour+6*time.Minute)
	ev(postroom.EventSend, bouncedID, ann, "", "", "250 2.0.0 Ok: queued as 4dS2", 2*time.Hour)
	ev(postroom.EventHardBounce, bouncedID, ann, "bounce", "5.1.1", mailboxGone, 2*time.Hour+3*time.Minute)
	ev(postroom.EventSend, hostileID, hostileEmail, "", "", hostileText, 3*time.Hour)
	ev(postroom.EventHardBounce, hostileID, hostileEmail, "bounce", "5.1.1", hostileHTML, 3*time.Hour+time.Minute)
	f.activity.OnEvent(ctx, postroom.Event{Type: postroom.EventSend, SendID: otherID, AccountID: other, Email: ann, At: t0})

	for _, e := range []suppression.Entry{
		{AccountID: account, Address: ann, Reason: postroom.ReasonHardBounce, Detail: "5.1.1 " + mailboxGone, SendID: bouncedID, Scope: postroom.ScopeAll},
		{AccountID: account, Address: "bob@example.net", Reason: postroom.ReasonUnsub, Scope: postroom.ScopeList, List: "news.shop.example.com"},
		{AccountID: account, Address: "carol@example.net", Reason: postroom.ReasonSpam, Detail: hostileHTML, Scope: postroom.ScopeLists},
		{AccountID: other, Address: "dave@example.net", Reason: postroom.ReasonManual},
	} {
		if _, err := f.list.Add(ctx, e); err != nil {
			t.Fatal(err)
		}
	}

	if _, err := f.templates.Add(ctx, account, "password-reset", `<p>Hello {{first_name}},</p><p><a href="{{reset_url}}">Reset your password</a></p>`, true); err != nil {
		t.Fatal(err)
	}
	if _, err := f.templates.Update(ctx, account, "password-reset", `<p>Hi {{first_name}},</p><p><a href="{{reset_url}}">Choose a new password</a></p>`, false); err != nil {
		t.Fatal(err)
	}
	if _, err := f.templates.Add(ctx, account, "hostile", hostileHTML+"{{x}}", true); err != nil {
		t.Fatal(err)
	}
	if _, err := f.templates.Add(ctx, other, "secret", "other account's", true); err != nil {
		t.Fatal(err)
	}
	nothing := postroom.TransportFunc(func(context.Context, *postroom.Envelope) error { return nil })
	m, err := postroom.New(nothing, postroom.Options{Auth: postroom.NoAuth{}, Templates: f.templates})
	if err != nil {
		t.Fatal(err)
	}
	pv, err := preview.New(m, preview.Options{})
	if err != nil {
		t.Fatal(err)
	}
	opts := console.Options{
		Account:      func(*http.Request) (string, error) { return account, nil },
		Activity:     f.activity,
		Suppressions: f.list,
		Templates:    f.templates,
		Renderer:     m,
		Preview:      pv,
	}
	if change != nil {
		change(&opts)
	}
	if f.h, err = console.New(opts); err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle(prefix+"/", http.StripPrefix(prefix, f.h))
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

// get requests path (under the console) and returns the answer and its
// body.
func (f *fixture) get(t *testing.T, path string) (*http.Response, string) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	return serve(t, f.h, req)
}

// post posts form to path as a same-origin browser form would.
func (f *fixture) post(t *testing.T, path string, form url.Values) (*http.Response, string) {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	return serve(t, f.h, req)
}

// serve runs req through h.
func serve(t *testing.T, h http.Handler, req *http.Request) (*http.Response, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	res := rec.Result()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, string(b)
}

// listed reports whether address has an entry of scope in the account.
func (f *fixture) listed(t *testing.T, address string, scope postroom.Scope) bool {
	t.Helper()
	es, _, err := f.list.List(t.Context(), suppression.Query{AccountID: account, Prefix: address, Scope: scope, IncludeExpired: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		if e.Address == address {
			return true
		}
	}
	return false
}
