// Package transporttest checks that a postroom.Transport keeps the
// Transport contract, as testing/slogtest does for slog handlers.
//
// A Transport's own tests call Run with a constructor; Run checks
// delivery, ownership of the Envelope, concurrency and cancellation, each
// in its own sub-test. It does not check failure reporting (the DeliveryError kinds
// or partial refusals), which depends on what the next hop says:
// test those against the transport's own scripted faults.
//
// From the module it imports only postroom; only tests import it.
package transporttest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/postroom/postroom"
)

// Concurrency is the number of goroutines the concurrent sub-test sends
// from at once.
const Concurrency = 16

// Run checks tr against the postroom.Transport contract. For each sub-test
// it calls newTransport with the sub-test's *testing.T, which returns a
// fresh Transport and a function reporting the message bytes it delivered
// for a send id (false if none). newTransport should register its cleanup
// with t.Cleanup; delivered must be safe to call once Send has returned.
//
// The sub-tests are:
//
//   - Deliver: a valid envelope is delivered with nil error, the bytes
//     read back are identical to Envelope.Data, and Send does not modify
//     the Envelope.
//   - DataNotKept: after Send returns the test overwrites Data and To; the
//     delivered copy must not change.
//   - Concurrent: Concurrency goroutines call Send at once; every message
//     is delivered intact.
//   - Canceled and DeadlineExceeded: with a done ctx, Send returns an error
//     wrapping ctx.Err() (errors.Is) and delivers nothing.
//
// The messages are 7-bit, CRLF-terminated, with lines up to 998 octets,
// lines starting with a dot and a line holding only a dot, so that a
// transport that dot-stuffs or rewraps must undo it exactly.
func Run(t *testing.T, newTransport func(t *testing.T) (tr postroom.Transport, delivered func(sendID string) ([]byte, bool))) {
	t.Helper()
	t.Run("Deliver", func(t *testing.T) {
		tr, delivered := newTransport(t)
		env := NewEnvelope(t)
		before := cloneEnvelope(env)
		if err := tr.Send(t.Context(), env); err != nil {
			t.Fatalf("Send: %v", err)
		}
		if !equalEnvelopes(env, before) {
			t.Errorf("Send modified the envelope:\n got %+v\nwant %+v", env, before)
		}
		checkDelivered(t, delivered, env.SendID, before.Data)
	})

	t.Run("DataNotKept", func(t *testing.T) {
		tr, delivered := newTransport(t)
		env := NewEnvelope(t)
		want := bytes.Clone(env.Data)
		if err := tr.Send(t.Context(), env); err != nil {
			t.Fatalf("Send: %v", err)
		}
		// The Mailer reuses Data for its next message.
		for i := range env.Data {
			env.Data[i] = 'X'
		}
		for i := range env.To {
			env.To[i] = "overwritten@invalid.example"
		}
		checkDelivered(t, delivered, env.SendID, want)
	})

	t.Run("Concurrent", func(t *testing.T) {
		tr, delivered := newTransport(t)
		envs := make([]*postroom.Envelope, Concurrency)
		wants := make([][]byte, Concurrency)
		for i := range envs {
			envs[i] = NewEnvelope(t)
			wants[i] = bytes.Clone(envs[i].Data)
		}
		errs := make([]error, Concurrency)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range envs {
			wg.Go(func() {
				<-start
				errs[i] = tr.Send(t.Context(), envs[i])
				// Reuse the memory at once, as the Mailer does.
				clear(envs[i].Data)
			})
		}
		close(start)
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("Send %d: %v", i, err)
				continue
			}
			checkDelivered(t, delivered, envs[i].SendID, wants[i])
		}
	})

	done := []struct {
		name string
		ctx  func(t *testing.T) context.Context
		want error
	}{
		{
			name: "Canceled",
			ctx: func(t *testing.T) context.Context {
				ctx, cancel := context.WithCancel(t.Context())
				cancel()
				return ctx
			},
			want: context.Canceled,
		},
		{
			name: "DeadlineExceeded",
			ctx: func(t *testing.T) context.Context {
				ctx, cancel := context.WithDeadline(t.Context(), time.Unix(0, 0))
				t.Cleanup(cancel)
				return ctx
			},
			want: context.DeadlineExceeded,
		},
	}
	for _, tt := range done {
		t.Run(tt.name, func(t *testing.T) {
			tr, delivered := newTransport(t)
			env := NewEnvelope(t)
			err := tr.Send(tt.ctx(t), env)
			if !errors.Is(err, tt.want) {
				t.Errorf("Send with a done ctx = %v; want an error wrapping %v", err, tt.want)
			}
			if got, ok := delivered(env.SendID); ok {
				t.Errorf("Send with a done ctx delivered %d bytes", len(got))
			}
		})
	}
}

// NewEnvelope returns a valid Envelope with a fresh random SendID, two
// recipients (the second standing for a bcc copy) and a complete 7-bit
// message exercising the edge cases described in Run.
func NewEnvelope(t testing.TB) *postroom.Envelope {
	t.Helper()
	var id [16]byte
	rand.Read(id[:]) // never returns an error
	sendID := hex.EncodeToString(id[:])

	var b strings.Builder
	line := func(s string) { b.WriteString(s + "\r\n") }
	line("From: Sender <sender@example.org>")
	line("To: Recipient <rcpt@example.com>")
	line("Subject: transporttest " + sendID)
	line("Date: Mon, 02 Jan 2006 15:04:05 +0000")
	line(fmt.Sprintf("Message-ID: <%s@example.org>", sendID))
	line("MIME-Version: 1.0")
	line("Content-Type: text/plain; charset=us-ascii")
	line("Content-Transfer-Encoding: 7bit")
	line("")
	line("First line.")
	line(".")
	line("..two leading dots")
	line(".one leading dot")
	line("From the start of a line, as mbox would quote it")
	line("")
	line("  indented, with trailing space  ")
	line(strings.Repeat("x", 998))
	line("Send id " + sendID)
	line(".")
	return &postroom.Envelope{
		SendID: sendID,
		From:   "sender@example.org",
		To:     []string{"rcpt@example.com", "bcc@example.net"},
		Data:   []byte(b.String()),
	}
}

// checkDelivered reports an error unless delivered(sendID) holds want.
func checkDelivered(t *testing.T, delivered func(string) ([]byte, bool), sendID string, want []byte) {
	t.Helper()
	got, ok := delivered(sendID)
	if !ok {
		t.Errorf("message %s was not delivered", sendID)
		return
	}
	if !bytes.Equal(got, want) {
		t.Errorf("message %s delivered as %d bytes differing from the %d sent:\n got %q\nwant %q",
			sendID, len(got), len(want), got, want)
	}
}

func cloneEnvelope(env *postroom.Envelope) *postroom.Envelope {
	return &postroom.Envelope{
		SendID: env.SendID,
		From:   env.From,
		To:     slices.Clone(env.To),
		Data:   bytes.Clone(env.Data),
	}
}

func equalEnvelopes(a, b *postroom.Envelope) bool {
	return a.SendID == b.SendID && a.From == b.From &&
		slices.Equal(a.To, b.To) && bytes.Equal(a.Data, b.Data)
}
