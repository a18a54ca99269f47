package transport_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/testkit/workload"
	"github.com/postroom/postroom/transport"
	"github.com/postroom/postroom/transport/transporttest"
)

var _ postroom.Transport = (*transport.Memory)(nil)

func TestMemoryConformance(t *testing.T) {
	transporttest.Run(t, func(t *testing.T) (postroom.Transport, func(string) ([]byte, bool)) {
		m := transport.NewMemory()
		return m, func(sendID string) ([]byte, bool) {
			env, ok := m.Envelope(sendID)
			return env.Data, ok
		}
	})
}

func TestMemoryRecords(t *testing.T) {
	var m transport.Memory // the zero value is ready to use
	ctx := t.Context()
	envs := []*postroom.Envelope{
		transporttest.NewEnvelope(t),
		transporttest.NewEnvelope(t),
		transporttest.NewEnvelope(t),
	}
	steps := []struct {
		name string
		do   func(t *testing.T)
		want []*postroom.Envelope
	}{
		{name: "empty", want: nil},
		{
			name: "send_in_order",
			do: func(t *testing.T) {
				for _, env := range envs {
					if err := m.Send(ctx, env); err != nil {
						t.Fatal(err)
					}
				}
			},
			want: envs,
		},
		{
			name: "returned_copies_are_independent",
			do: func(t *testing.T) {
				got := m.Envelopes()
				got[0].Data[0] = 'Z'
				got[0].To[0] = "changed@example.com"
				got[1] = postroom.Envelope{}
				one, _ := m.Envelope(envs[2].SendID)
				clear(one.Data)
			},
			want: envs,
		},
		{
			name: "reset",
			do:   func(*testing.T) { m.Reset() },
			want: nil,
		},
		{
			name: "send_after_reset",
			do: func(t *testing.T) {
				if err := m.Send(ctx, envs[1]); err != nil {
					t.Fatal(err)
				}
			},
			want: envs[1:2],
		},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			if s.do != nil {
				s.do(t)
			}
			got := m.Envelopes()
			if m.Len() != len(s.want) || len(got) != len(s.want) {
				t.Fatalf("Len() = %d, len(Envelopes()) = %d; want %d", m.Len(), len(got), len(s.want))
			}
			for i, want := range s.want {
				if !sameEnvelope(&got[i], want) {
					t.Errorf("Envelopes()[%d] = %+v; want %+v", i, got[i], *want)
				}
				one, ok := m.Envelope(want.SendID)
				if !ok || !sameEnvelope(&one, want) {
					t.Errorf("Envelope(%s) = %+v, %v; want %+v", want.SendID, one, ok, *want)
				}
			}
		})
	}
	if _, ok := m.Envelope(envs[0].SendID); ok {
		t.Errorf("Envelope(%s) found after Reset", envs[0].SendID)
	}
}

func TestMemoryFail(t *testing.T) {
	permanent := &postroom.DeliveryError{Kind: postroom.DeliveryPermanent, Code: 550, Enhanced: "5.1.1", Text: "no such user"}
	uncertain := &postroom.DeliveryError{Kind: postroom.DeliveryUncertain, Err: errors.New("connection reset")}
	partial := &postroom.PartialError{Refused: []postroom.RefusedRecipient{
		{Address: "bcc@example.net", Err: &postroom.DeliveryError{Kind: postroom.DeliveryPermanent, Code: 550}},
	}}
	plain := errors.New("try later")
	tests := []struct {
		name     string
		fail     func(*postroom.Envelope) error
		wantErr  error // matched with errors.Is
		recorded bool
		wantTo   []string
	}{
		{name: "nil_hook", recorded: true, wantTo: []string{"rcpt@example.com", "bcc@example.net"}},
		{name: "hook_accepts", fail: func(*postroom.Envelope) error { return nil }, recorded: true, wantTo: []string{"rcpt@example.com", "bcc@example.net"}},
		{name: "permanent", fail: func(*postroom.Envelope) error { return permanent }, wantErr: permanent},
		{name: "uncertain", fail: func(*postroom.Envelope) error { return uncertain }, wantErr: uncertain},
		{name: "temporary", fail: func(*postroom.Envelope) error { return plain }, wantErr: plain},
		{name: "partial", fail: func(*postroom.Envelope) error { return partial }, wantErr: partial, recorded: true, wantTo: []string{"rcpt@example.com"}},
		{
			name: "per_recipient",
			fail: func(env *postroom.Envelope) error {
				if env.To[0] == "rcpt@example.com" {
					return permanent
				}
				return nil
			},
			wantErr: permanent,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &transport.Memory{Fail: tt.fail}
			env := transporttest.NewEnvelope(t)
			err := m.Send(t.Context(), env)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Send = %v; want %v", err, tt.wantErr)
			}
			got, ok := m.Envelope(env.SendID)
			if ok != tt.recorded {
				t.Fatalf("recorded = %v; want %v", ok, tt.recorded)
			}
			if ok && !slices.Equal(got.To, tt.wantTo) {
				t.Errorf("recorded To = %q; want %q", got.To, tt.wantTo)
			}
			if len(env.To) != 2 {
				t.Errorf("Send changed the caller's To to %q", env.To)
			}
		})
	}
}

func TestMemoryConcurrentLen(t *testing.T) {
	m := transport.NewMemory()
	const senders, each = 8, 50
	var wg sync.WaitGroup
	for range senders {
		wg.Go(func() {
			for range each {
				if err := m.Send(t.Context(), transporttest.NewEnvelope(t)); err != nil {
					t.Error(err)
					return
				}
				_ = m.Len()
			}
		})
	}
	wg.Go(func() {
		for range each {
			_ = m.Envelopes()
		}
	})
	wg.Wait()
	if got := m.Len(); got != senders*each {
		t.Errorf("Len() = %d; want %d", got, senders*each)
	}
	seen := make(map[string]bool)
	for _, env := range m.Envelopes() {
		if seen[env.SendID] {
			t.Errorf("send id %s recorded twice", env.SendID)
		}
		seen[env.SendID] = true
	}
}

func sameEnvelope(a, b *postroom.Envelope) bool {
	return a.SendID == b.SendID && a.From == b.From &&
		slices.Equal(a.To, b.To) && string(a.Data) == string(b.Data)
}

func ExampleMemory() {
	m := transport.NewMemory()
	env := &postroom.Envelope{
		SendID: "0123456789abcdef0123456789abcdef",
		From:   "news@example.org",
		To:     []string{"ann@example.com", "audit@example.org"},
		Data:   []byte("Subject: Hello\r\n\r\nHi Ann\r\n"),
	}
	if err := m.Send(context.Background(), env); err != nil {
		fmt.Println(err)
		return
	}
	clear(env.Data) // the caller may reuse its memory at once

	for _, got := range m.Envelopes() {
		fmt.Println(got.SendID, got.To)
		fmt.Printf("%q\n", got.Data)
	}
	// Output:
	// 0123456789abcdef0123456789abcdef [ann@example.com audit@example.org]
	// "Subject: Hello\r\n\r\nHi Ann\r\n"
}

func ExampleMemory_fail() {
	// Refuse one address for good, as an SMTP server answering 550 would.
	m := &transport.Memory{Fail: func(env *postroom.Envelope) error {
		if env.To[0] == "gone@example.com" {
			return &postroom.DeliveryError{Kind: postroom.DeliveryPermanent, Code: 550, Enhanced: "5.1.1", Text: "no such user"}
		}
		return nil
	}}
	for _, to := range []string{"ann@example.com", "gone@example.com"} {
		err := m.Send(context.Background(), &postroom.Envelope{To: []string{to}})
		var de *postroom.DeliveryError
		fmt.Println(to, errors.As(err, &de) && (de.Kind == postroom.DeliveryPermanent))
	}
	fmt.Println(m.Len())
	// Output:
	// ann@example.com false
	// gone@example.com true
	// 1
}

// workloadEnvelope returns an Envelope the size of one message of the
// shared transactional workload: its html and text bodies and its files in
// base64 at 76 columns, CRLF line endings.
func workloadEnvelope(b *testing.B) *postroom.Envelope {
	b.Helper()
	var call postroom.Call
	if err := json.Unmarshal(workload.Read(b), &call); err != nil {
		b.Fatal(err)
	}
	var data strings.Builder
	crlf := func(s string) {
		data.WriteString(strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\n", "\r\n"))
		data.WriteString("\r\n")
	}
	wrap := func(s string) {
		for len(s) > 76 {
			data.WriteString(s[:76] + "\r\n")
			s = s[76:]
		}
		data.WriteString(s + "\r\n")
	}
	crlf("Subject: " + call.Message.Subject + "\n")
	crlf(call.Message.Text)
	crlf(call.Message.HTML)
	for _, img := range call.Message.Images {
		wrap(img.Content)
	}
	for _, a := range call.Message.Attachments {
		wrap(a.Content)
	}
	env := transporttest.NewEnvelope(b)
	env.Data = []byte(data.String())
	return env
}

func BenchmarkMemorySend(b *testing.B) {
	env := workloadEnvelope(b)
	m := transport.NewMemory()
	ctx := b.Context()
	b.SetBytes(int64(len(env.Data)))
	b.ReportAllocs()
	for b.Loop() {
		if err := m.Send(ctx, env); err != nil {
			b.Fatal(err)
		}
		if m.Len() == 1000 {
			b.StopTimer()
			m.Reset()
			b.StartTimer()
		}
	}
}
