package postroom_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/testkit/smtptest"
	"github.com/postroom/postroom/suppression"
	"github.com/postroom/postroom/transport"
)

// listed is the instant the test lists its addresses.
var listed = time.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC)

// countingList is a suppression.Memory that records each lookup's
// addresses, to check that a call makes one.
type countingList struct {
	*suppression.Memory
	mu      sync.Mutex
	lookups [][]string
}

func (c *countingList) Suppressed(ctx context.Context, accountID string, addresses []string, now time.Time) ([]postroom.Suppression, error) {
	c.mu.Lock()
	c.lookups = append(c.lookups, slices.Clone(addresses))
	c.mu.Unlock()
	return c.Memory.Suppressed(ctx, accountID, addresses, now)
}

// newList is a Memory list of account acct holding a hard bounce of
// dead@example.com (added in another case), an unsubscribe of
// gone@example.com, a complaint of the bcc archive@shop.example.com and
// an expired soft bounce of back@example.com, listed at listed; and in
// another account, ok@example.com.
func newList(t *testing.T, acct string) *countingList {
	t.Helper()
	mem, err := suppression.NewMemory(suppression.Options{Now: func() time.Time { return listed }})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []suppression.Entry{
		{AccountID: acct, Address: "Dead@Example.com", Reason: postroom.ReasonHardBounce, Detail: "550 5.1.1 user unknown"},
		{AccountID: acct, Address: "gone@example.com", Reason: postroom.ReasonUnsub},
		{AccountID: acct, Address: "archive@shop.example.com", Reason: postroom.ReasonSpam},
		{AccountID: acct, Address: "back@example.com", Reason: postroom.ReasonSoftBounce, Created: listed.Add(-8 * 24 * time.Hour), Expires: listed.Add(-24 * time.Hour)},
		{AccountID: "other", Address: "ok@example.com", Reason: postroom.ReasonManual},
	} {
		if _, err := mem.Add(t.Context(), e); err != nil {
			t.Fatal(err)
		}
	}
	return &countingList{Memory: mem}
}

// TestSuppressionsSend sends through a real SMTP server to listed and
// unlisted recipients: the listed ones are rejected with the entry's
// reason and never reach the server (the ledger's oracle), the others are
// sent, all from one lookup made after validation.
func TestSuppressionsSend(t *testing.T) {
	srv := smtptest.NewServer(t, smtptest.Options{})
	tr, err := transport.NewSMTP(transport.SMTPOptions{Addr: srv.Addr(), TLS: transport.NoTLS})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	list := newList(t, "acct")
	var logs bytes.Buffer
	m := newMailer(t, tr, postroom.Options{
		Suppressions: list,
		Now:          func() time.Time { return listed.Add(time.Hour) },
		Logger:       slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	call := smallCall(" DEAD@example.COM ", "gone@example.com", "ok@example.com", "back@example.com", "not an address", "Ok@example.com")
	call.Message.BCC = "audit@shop.example.com, Archive <ARCHIVE@shop.example.com>"
	var reported sync.Map
	results, err := m.Run(t.Context(), postroom.OpSend, call, postroom.RunOptions{OnResult: func(i int, r postroom.Result) { reported.Store(i, r) }})
	if err != nil {
		t.Fatal(err)
	}

	type want struct {
		status postroom.Status
		code   postroom.ReasonCode
		reason string
	}
	for i, w := range []want{
		{postroom.StatusRejected, postroom.ReasonHardBounce, "hard-bounce: suppressed since 2026-11-20: 550 5.1.1 user unknown"},
		{postroom.StatusRejected, postroom.ReasonUnsub, "unsub: suppressed since 2026-11-20"},
		{postroom.StatusSent, "", ""}, // listed in another account only
		{postroom.StatusSent, "", ""}, // its entry expired
		{postroom.StatusInvalid, postroom.ReasonInvalidEmail, ""},
		{postroom.StatusInvalid, postroom.ReasonDuplicate, ""},
	} {
		r := results[i]
		if r.Status != w.status || r.Code != w.code || (w.reason != "" && r.Reason != w.reason) {
			t.Errorf("results[%d] (%s) = %s %q; want %s %q", i, r.Email, r.Status, r.Reason, w.status, w.reason)
		}
		if r.Status == postroom.StatusRejected {
			var se *postroom.SuppressedError
			if r.SendID != "" || !errors.As(r.Err, &se) || se.Suppression.Reason != w.code {
				t.Errorf("results[%d]: send id %q, Err %v; want none and a *SuppressedError of %s", i, r.SendID, r.Err, w.code)
			}
		}
		if got, ok := reported.Load(i); !ok || got.(postroom.Result).Status != r.Status {
			t.Errorf("OnResult for %d: %v; want the Result", i, got)
		}
	}
	if r := results[0]; r.Email != " DEAD@example.COM " {
		t.Errorf("a rejected Result's Email is %q; want the recipient's email as given", r.Email)
	}
	// What the server accepted agrees with the results: nothing for a
	// rejected recipient.
	smtptest.CheckLedger(t, srv, results[:4])

	// One lookup: the valid recipients and the bcc, lower-cased.
	if len(list.lookups) != 1 {
		t.Fatalf("%d lookups; want 1", len(list.lookups))
	}
	wantAddrs := []string{"dead@example.com", "gone@example.com", "ok@example.com", "back@example.com", "audit@shop.example.com", "archive@shop.example.com"}
	if !slices.Equal(list.lookups[0], wantAddrs) {
		t.Errorf("looked up %q; want %q", list.lookups[0], wantAddrs)
	}
	// The listed bcc is dropped from every envelope, and the drop logged.
	for _, msg := range srv.Messages() {
		if !slices.Equal(msg.To[1:], []string{"audit@shop.example.com"}) {
			t.Errorf("envelope of %s: %q; want the bcc audit@ alone", msg.To[0], msg.To)
		}
	}
	if !strings.Contains(logs.String(), "postroom bcc suppressed") || !strings.Contains(logs.String(), "bcc=ARCHIVE@shop.example.com reason=spam") {
		t.Errorf("log: %s; want the dropped bcc noted", logs.String())
	}
}

// TestSuppressionsLookupFails: a list that cannot answer refuses the call
// before anything is sent, with an error wrapping ErrSuppressions and the
// list's own.
func TestSuppressionsLookupFails(t *testing.T) {
	down := errors.New("list down")
	mem := transport.NewMemory()
	m := newMailer(t, mem, postroom.Options{Suppressions: failingList{down}})
	results, err := m.Send(t.Context(), smallCall("ann@example.com", "bob@example.com"))
	if !errors.Is(err, postroom.ErrSuppressions) || !errors.Is(err, down) || results != nil {
		t.Errorf("Send = %v, %v; want no results and an error wrapping ErrSuppressions and the list's", results, err)
	}
	if postroom.ValidationErrors(err) != nil || errors.Is(err, postroom.ErrUnauthorized) {
		t.Errorf("error %v reads as the caller's fault", err)
	}
	if mem.Len() != 0 {
		t.Errorf("%d messages sent; want none", mem.Len())
	}
	// Preview and Validate too: the lookup is part of preparing a call.
	if _, err := m.Preview(t.Context(), postroom.OpSend, smallCall("ann@example.com"), postroom.PreviewOptions{}); !errors.Is(err, postroom.ErrSuppressions) {
		t.Errorf("Preview: %v; want ErrSuppressions", err)
	}
	if _, err := m.Validate(t.Context(), postroom.OpSend, smallCall("ann@example.com")); !errors.Is(err, postroom.ErrSuppressions) {
		t.Errorf("Validate: %v; want ErrSuppressions", err)
	}
}

// failingList is a suppression list whose store is down.
type failingList struct{ err error }

func (f failingList) Suppressed(context.Context, string, []string, time.Time) ([]postroom.Suppression, error) {
	return nil, f.err
}

// TestSuppressionsNoLookup: a call refused by validation, or whose
// recipients are all invalid and has no bcc, looks nothing up.
func TestSuppressionsNoLookup(t *testing.T) {
	list := newList(t, "acct")
	m := newMailer(t, transport.NewMemory(), postroom.Options{Suppressions: list})
	bad := smallCall("ann@example.com")
	bad.Message.FromEmail = "nobody"
	if _, err := m.Send(t.Context(), bad); postroom.ValidationErrors(err) == nil {
		t.Fatalf("Send of a bad from_email: %v; want a ValidationError", err)
	}
	results, err := m.Send(t.Context(), smallCall("not an address"))
	if err != nil || results[0].Status != postroom.StatusInvalid {
		t.Fatalf("Send = %v, %v", results, err)
	}
	if len(list.lookups) != 0 {
		t.Errorf("lookups %q; want none", list.lookups)
	}
}

// TestSuppressionsPreviewValidate: Preview and Validate show a listed
// recipient rejected, as Run would, and make no message for it.
func TestSuppressionsPreviewValidate(t *testing.T) {
	list := newList(t, "acct")
	m := newMailer(t, transport.NewMemory(), postroom.Options{Suppressions: list, Now: func() time.Time { return listed.Add(time.Hour) }})
	p, err := m.Preview(t.Context(), postroom.OpSend, smallCall("dead@example.com", "ok@example.com"), postroom.PreviewOptions{Message: true})
	if err != nil {
		t.Fatal(err)
	}
	if r := p.Recipients[0]; r.Result.Status != postroom.StatusRejected || r.Result.Code != postroom.ReasonHardBounce || r.Message != nil || r.Subject != "" {
		t.Errorf("Preview of a listed recipient: %+v; want rejected hard-bounce, nothing rendered", r)
	}
	if r := p.Recipients[1]; r.Result.Status != postroom.StatusSent || r.Message == nil {
		t.Errorf("Preview of an unlisted recipient: %+v; want its message", r.Result)
	}
	checked, err := m.Validate(t.Context(), postroom.OpSend, smallCall("gone@example.com", "ok@example.com"))
	if err != nil {
		t.Fatal(err)
	}
	if checked[0].Status != postroom.StatusRejected || checked[0].Code != postroom.ReasonUnsub || checked[1].Status != "" {
		t.Errorf("Validate = %+v; want the listed one rejected (unsub), the other open", checked)
	}
}

// TestSuppressionsInactiveEntryIgnored: an entry a list returns that is
// not active at the call's time (a list that filters badly) rejects
// no one.
func TestSuppressionsInactiveEntryIgnored(t *testing.T) {
	now := listed
	stale := staleList{{Address: "ann@example.com", Reason: postroom.ReasonSoftBounce, Created: now.Add(-2 * time.Hour), Expires: now.Add(-time.Hour)},
		{Address: "bob@example.com", Reason: postroom.ReasonManual, Created: now.Add(time.Hour)}}
	m := newMailer(t, transport.NewMemory(), postroom.Options{Suppressions: stale, Now: func() time.Time { return now }})
	results, err := m.Send(t.Context(), smallCall("ann@example.com", "bob@example.com"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		if r.Status != postroom.StatusSent {
			t.Errorf("%s: %s %q; want sent", r.Email, r.Status, r.Reason)
		}
	}
}

// staleList returns its entries whatever is asked.
type staleList []postroom.Suppression

func (s staleList) Suppressed(context.Context, string, []string, time.Time) ([]postroom.Suppression, error) {
	return slices.Clone(s), nil
}
