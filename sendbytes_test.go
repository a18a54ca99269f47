package postroom_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"sync"
	"testing"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/testkit/fixture"
)

// TestSendBytesUnchanged pins the bytes of a deterministic Send (the
// workload's 16-recipient call, with and without DKIM, Options.Rand and
// Options.Now fixed): the SHA-256 of every recipient's envelope and
// message, in recipient order. A change of the path a call takes
// (prepare, seal, run) must leave them as they are; a deliberate change
// of the messages updates the hashes here.
func TestSendBytesUnchanged(t *testing.T) {
	signers, _ := testSigners(t)
	for _, tc := range []struct {
		name string
		dkim []postroom.DKIMSigner
		want string
	}{
		{"plain", nil, "7ea30c0c19a4e996b1e0d7532d90bf0153974b91988d4aa5a39cdf8e931ad50b"},
		{"dkim", signers, "9176b765ac71c483d39a4ca04ffede131b9016728cbb27ce0b27cdc951d88806"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
			var mu sync.Mutex
			byID := map[string]*postroom.Envelope{}
			m := newMailer(t, postroom.TransportFunc(func(_ context.Context, env *postroom.Envelope) error {
				c := *env
				c.To = append([]string(nil), env.To...)
				c.Data = append([]byte(nil), env.Data...)
				mu.Lock()
				byID[env.SendID] = &c
				mu.Unlock()
				return nil
			}), postroom.Options{DKIM: tc.dkim, Rand: &fixedRand{}, Now: func() time.Time { return now }})
			results, err := m.Send(t.Context(), fixture.Shared(t).Call(16))
			if err != nil {
				t.Fatal(err)
			}
			h := sha256.New()
			for i, r := range results {
				env := byID[r.SendID]
				if env == nil {
					t.Fatalf("recipient %d: %s, no message", i, r.Status)
				}
				h.Write([]byte(r.SendID + "\x00" + env.From + "\x00"))
				for _, to := range env.To {
					h.Write([]byte(to + "\x00"))
				}
				h.Write(env.Data)
			}
			if got := hex.EncodeToString(h.Sum(nil)); got != tc.want {
				t.Errorf("messages hash to %s, want %s", got, tc.want)
			}
		})
	}
}
