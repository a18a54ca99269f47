package inbound_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/emersion/go-smtp"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/events"
	"github.com/postroom/postroom/inbound"
)

// BenchmarkHandle: one DSN through Handle (parse, look the send up, list
// the address) with the in-memory stores; and through the SMTP server,
// one message per transaction on one connection.
func BenchmarkHandle(b *testing.B) {
	const recorded = "gone@example.net"
	id := strings.Repeat("6b", 16)
	sends, _ := events.NewMemory(events.MemoryOptions{})
	sends.OnEvent(context.Background(), postroom.Event{Type: postroom.EventSend, SendID: id, AccountID: account, Email: recorded})
	list := newSuppressions(b)
	rec, err := inbound.New(inbound.Options{VERP: verp, Sends: sends, Suppressions: list, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	msg := dsn(verp.Address(id), recorded, "failed", "5.1.1", "550 5.1.1 <gone@example.net>: Recipient address rejected: User unknown")
	b.Run("Handle", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(msg)))
		for b.Loop() {
			out, err := rec.Handle(context.Background(), strings.NewReader(msg), verp.Address(id))
			if err != nil || out.Verdict != inbound.VerdictRecorded {
				b.Fatal(out.Verdict, err)
			}
		}
	})
	b.Run("SMTP", func(b *testing.B) {
		c, err := smtp.Dial(serve(b, rec, false))
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		b.ReportAllocs()
		b.SetBytes(int64(len(msg)))
		for b.Loop() {
			if err := c.Mail("", nil); err != nil {
				b.Fatal(err)
			}
			if err := c.Rcpt(verp.Address(id), nil); err != nil {
				b.Fatal(err)
			}
			w, err := c.Data()
			if err != nil {
				b.Fatal(err)
			}
			io.WriteString(w, msg)
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
