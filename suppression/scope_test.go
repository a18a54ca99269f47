package suppression_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/suppression"
	"github.com/postroom/postroom/transport"
)

// FuzzListID checks the list ids a ScopeList entry takes against the
// reference, the Mailer's check of a call's List-Id: an id is taken by
// Add exactly when a call whose List-Id names it is taken, and kept as
// the call's list (Prepared.List), lower-cased. A taken id is kept as
// itself when given again.
func FuzzListID(f *testing.F) {
	for _, s := range []string{"news.shop.example.com", "News.Shop.Example.COM", "news", "a.b", ".a.b", "a..b", "a.b.", "a b.c", "a\x00.b",
		"a+b=c.d", "x{y}.z", "caf\u00e9.example", strings.Repeat("a", 250) + ".bcde", strings.Repeat("a", 251) + ".bcde", "a<b.c", "a>b.c", "a\"b.c"} {
		f.Add(s)
	}
	l, err := suppression.NewMemory(suppression.Options{})
	if err != nil {
		f.Fatal(err)
	}
	m, err := postroom.New(transport.NewMemory(), postroom.Options{Auth: postroom.NoAuth{}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, id string) {
		// The Mailer reads the id out of a header value: what it trims
		// (space, brackets) or refuses as a value (a placeholder) is not
		// the id's to compare.
		if strings.TrimSpace(id) != id || strings.HasPrefix(id, "<") || strings.Contains(id, "{{") {
			t.Skip()
		}
		e, addErr := l.Add(t.Context(), suppression.Entry{AccountID: "a", Address: "ann@example.com", Scope: postroom.ScopeList, List: id})
		t.Cleanup(func() { _, _ = l.Delete(context.Background(), "a", "ann@example.com", "", "") }) // t.Context ends before cleanups
		call := &postroom.Call{AccountID: "a", Message: postroom.Message{FromEmail: "shop@example.com", Subject: "s", Text: "t",
			Headers: []postroom.Header{postroom.ListID("", id)}}, Recipients: []postroom.Recipient{{Email: "ann@example.com"}}}
		p, callErr := m.Prepare(t.Context(), postroom.OpSend, call)
		if (addErr == nil) != (callErr == nil) {
			t.Fatalf("list %q: Add error %v, the Mailer's %v; want both or neither", id, addErr, callErr)
		}
		if addErr != nil {
			var ve *postroom.ValidationError
			if !errors.As(addErr, &ve) || ve.Field != "list" {
				t.Fatalf("list %q: Add error %v; want a *postroom.ValidationError on list", id, addErr)
			}
			return
		}
		if e.List != p.List() || e.List != strings.ToLower(id) || len(e.List) > postroom.MaxListIDBytes {
			t.Fatalf("list %q: kept %q, the Mailer's %q; want it lower-cased, alike", id, e.List, p.List())
		}
		again, err := l.Add(t.Context(), suppression.Entry{AccountID: "a", Address: "ann@example.com", Scope: postroom.ScopeList, List: e.List})
		if err != nil || again.List != e.List {
			t.Fatalf("list %q given again: %q, %v; want it kept as itself", e.List, again.List, err)
		}
	})
}

// TestObservationOfList: an event's list is its observation's, and gives
// the entry's scope: a hard bounce of a list message all mail, a
// complaint about one all lists, an unsubscribe from one that list.
func TestObservationOfList(t *testing.T) {
	l, err := suppression.NewMemory(suppression.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		typ   postroom.EventType
		scope postroom.Scope
		list  string
	}{
		{postroom.EventHardBounce, postroom.ScopeAll, ""},
		{postroom.EventSpam, postroom.ScopeLists, ""},
		{postroom.EventUnsub, postroom.ScopeList, "news.shop.example.com"},
	} {
		o, ok := suppression.ObservationOf(postroom.Event{Type: tt.typ, AccountID: "a", Email: string(tt.typ) + "@example.com", List: "news.shop.example.com"})
		if !ok || o.List != "news.shop.example.com" {
			t.Fatalf("ObservationOf(%s) = %+v, %v; want the event's list", tt.typ, o, ok)
		}
		e, err := l.Observe(t.Context(), o)
		if err != nil || e == nil || e.Scope != tt.scope || e.List != tt.list {
			t.Errorf("%s of a list message: %+v, %v; want scope %q list %q", tt.typ, e, err, tt.scope, tt.list)
		}
	}
}
