package inbound_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/events"
	"github.com/postroom/postroom/inbound"
	"github.com/postroom/postroom/suppression"
)

// FuzzHandleTrust: whatever a message says, Handle acts only on the
// recorded recipient of the send its envelope proves: every entry it
// lists and every event it emits is about that address, and nothing
// panics. The same message to the VERP address of a send id no store
// recorded acts on no one: it is asked again (within the grace of
// Options.UnknownSendGrace) or dropped.
func FuzzHandleTrust(f *testing.F) {
	const recorded = "ann@example.net"
	id := strings.Repeat("5a", 16)
	rcpt := verp.Address(id)
	unknownRcpt := verp.Address(strings.Repeat("6b", 16))
	for _, s := range []string{
		dsn(rcpt, recorded, "failed", "5.1.1", "550 5.1.1 User unknown"),
		dsn(rcpt, "bob@example.net", "failed", "5.1.1", "550 5.1.1 User unknown"),
		dsn(rcpt, recorded, "delayed", "4.4.1", "connection timed out"),
		arf(rcpt, "bob@example.net"),
		arf(rcpt, recorded),
		autoReply(rcpt, recorded),
		"",
	} {
		f.Add(s)
	}
	sends, _ := events.NewMemory(events.MemoryOptions{})
	sends.OnEvent(context.Background(), postroom.Event{Type: postroom.EventSend, SendID: id, AccountID: account, Email: recorded})
	list, _ := suppression.NewMemory(suppression.Options{})
	var emitted []postroom.Event
	rec, err := inbound.New(inbound.Options{
		VERP: verp, Sends: sends, Suppressions: list,
		SendWait: -1, // an unknown send id is answered at once
		Logger:   slog.New(slog.NewTextHandler(io.Discard, nil)),
		OnEvent:  func(_ context.Context, e postroom.Event) { emitted = append(emitted, e) },
	})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, msg string) {
		emitted = emitted[:0]
		out, err := rec.Handle(context.Background(), strings.NewReader(msg), rcpt)
		if err != nil {
			return
		}
		for _, e := range out.Listed {
			if !strings.EqualFold(e.Address, recorded) {
				t.Errorf("listed %q; only %s may be", e.Address, recorded)
			}
		}
		for _, e := range emitted {
			if e.Email != recorded || e.SendID != id {
				t.Errorf("event about %q (send %s); only %s's may be", e.Email, e.SendID, recorded)
			}
		}
		if out.Verdict == inbound.VerdictRecorded && len(emitted) == 0 {
			t.Errorf("verdict recorded without an event")
		}

		emitted = emitted[:0]
		out, err = rec.Handle(context.Background(), strings.NewReader(msg), unknownRcpt)
		if err != nil {
			return
		}
		if out.Verdict != inbound.VerdictRetryLater && out.Verdict != inbound.VerdictUnknownSend || len(out.Listed) != 0 || len(emitted) != 0 {
			t.Errorf("for an unknown send: %s, listed %v, events %v; want retry-later or unknown-send, nothing recorded", out.Verdict, out.Listed, emitted)
		}
	})
}
