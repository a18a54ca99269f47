package postroom_test

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/testkit/fixture"
	"github.com/postroom/postroom/transport"
)

// TestFileCacheSameMessages checks that the file cache changes no byte of
// any message: the workload's call (two images and an attachment) sent by
// a Mailer whose cache is off, and twice by one whose cache is on, the
// second time with every file's content a fresh string of the same bytes
// (a hit, as a server decoding each request gets), gives the same
// messages, with Rand and Now fixed.
func TestFileCacheSameMessages(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	call := fixture.Shared(t).Call(3)
	fresh := *call
	fresh.Message.Images = slices.Clone(call.Message.Images)
	fresh.Message.Attachments = slices.Clone(call.Message.Attachments)
	for i := range fresh.Message.Images {
		fresh.Message.Images[i].Content = strings.Clone(fresh.Message.Images[i].Content)
	}
	for i := range fresh.Message.Attachments {
		fresh.Message.Attachments[i].Content = strings.Clone(fresh.Message.Attachments[i].Content)
	}
	if len(fresh.Message.Images) == 0 || len(fresh.Message.Attachments) == 0 {
		t.Fatal("the workload has no images or no attachment: the test tests nothing")
	}
	// sent sends c with m, Rand reset to its start, and returns the
	// messages by send id.
	sent := func(m *postroom.Mailer, mem *transport.Memory, rnd *fixedRand, c *postroom.Call) map[string][]byte {
		t.Helper()
		*rnd = fixedRand{}
		before := len(mem.Envelopes())
		if _, err := m.Send(t.Context(), c); err != nil {
			t.Fatal(err)
		}
		byID := map[string][]byte{}
		for _, e := range mem.Envelopes()[before:] {
			byID[e.SendID] = e.Data
		}
		return byID
	}
	mailer := func(cacheBytes int) (*postroom.Mailer, *transport.Memory, *fixedRand) {
		mem, rnd := transport.NewMemory(), &fixedRand{}
		return newMailer(t, mem, postroom.Options{Rand: rnd, Now: func() time.Time { return now }, FileCacheBytes: cacheBytes}), mem, rnd
	}
	off, offMem, offRand := mailer(-1)
	want := sent(off, offMem, offRand, call)
	on, onMem, onRand := mailer(0)
	for k, c := range []*postroom.Call{call, &fresh, &fresh} {
		got := sent(on, onMem, onRand, c)
		if len(got) != len(want) {
			t.Fatalf("send %d: %d messages, want %d", k, len(got), len(want))
		}
		for id, data := range want {
			if !bytes.Equal(got[id], data) {
				t.Fatalf("send %d: message %s differs from the one made with the cache off", k, id)
			}
		}
	}
}
