package inbound_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/postroom/postroom"
)

// TestReportScopes: what comes back silences the mail its message stands
// for. A complaint about a list message lists the address for every list
// message only, one about a transactional message for all mail; a hard
// bounce of a list message lists all mail; the events carry the send's
// list. Each send's list comes from its record, written by the Mailer's
// send event.
func TestReportScopes(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	sendOf := func(email, list string) string {
		var b [16]byte
		rand.Read(b[:])
		id := hex.EncodeToString(b[:])
		f.sends.OnEvent(context.Background(), postroom.Event{Type: postroom.EventSend, SendID: id, AccountID: account, Email: email, List: list})
		return id
	}
	const news = "news.shop.example.com"
	for _, tc := range []struct {
		name, email, list, report string
		reason                    postroom.ReasonCode
		scope                     postroom.Scope
	}{
		{"complaint about list mail", "ann@example.net", news, "arf", postroom.ReasonSpam, postroom.ScopeLists},
		{"complaint about a receipt", "bob@example.net", "", "arf", postroom.ReasonSpam, postroom.ScopeAll},
		{"hard bounce of list mail", "cy@example.net", news, "dsn", postroom.ReasonHardBounce, postroom.ScopeAll},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := sendOf(tc.email, tc.list)
			msg := arf(verp.Address(id), tc.email)
			if tc.report == "dsn" {
				msg = dsn(verp.Address(id), tc.email, "failed", "5.1.1", "550 5.1.1 User unknown")
			}
			out, err := f.rec.Handle(t.Context(), strings.NewReader(msg), verp.Address(id))
			if err != nil {
				t.Fatal(err)
			}
			if len(out.Listed) != 1 {
				t.Fatalf("%s: listed %+v", out.Verdict, out.Listed)
			}
			if e := out.Listed[0]; e.Reason != tc.reason || e.Scope != tc.scope || e.List != "" {
				t.Errorf("listed %s scope %q list %q, want %s scope %q", e.Reason, e.Scope, e.List, tc.reason, tc.scope)
			}
			for _, e := range out.Events {
				if e.List != tc.list {
					t.Errorf("event %s with list %q, want %q", e.Type, e.List, tc.list)
				}
			}
			// What the Mailer then does with the entry: a list message
			// and a receipt of the same address.
			entries, err := f.supp.Suppressed(t.Context(), account, []string{tc.email}, time.Now())
			if err != nil || len(entries) != 1 {
				t.Fatalf("Suppressed: %+v, %v", entries, err)
			}
			if !entries[0].Covers(news) || entries[0].Covers("") != (tc.scope == postroom.ScopeAll) {
				t.Errorf("entry %+v covers list mail %v, receipts %v", entries[0], entries[0].Covers(news), entries[0].Covers(""))
			}
		})
	}
}
