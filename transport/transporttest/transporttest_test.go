package transporttest_test

import (
	"bytes"
	"context"
	"net/mail"
	"regexp"
	"sync"
	"testing"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/transport/transporttest"
)

// TestNewEnvelope checks that the envelopes Run sends are what the
// postroom.Envelope contract promises a Transport.
func TestNewEnvelope(t *testing.T) {
	sendID := regexp.MustCompile(`^[0-9a-f]{32}$`)
	seen := make(map[string]bool)
	for i := range 50 {
		env := transporttest.NewEnvelope(t)
		checks := []struct {
			name string
			ok   bool
		}{
			{"send_id_form", sendID.MatchString(env.SendID)},
			{"send_id_unique", !seen[env.SendID]},
			{"from_address", env.From != ""},
			{"two_recipients", len(env.To) == 2},
			{"ends_with_crlf", bytes.HasSuffix(env.Data, []byte("\r\n"))},
			{"lines_crlf_7bit_at_most_998", linesOK(env.Data)},
			{"has_lone_dot_line", bytes.Contains(env.Data, []byte("\r\n.\r\n"))},
			{"parses", parses(env.Data)},
		}
		seen[env.SendID] = true
		for _, c := range checks {
			if !c.ok {
				t.Errorf("envelope %d (%s): %s fails:\n%q", i, env.SendID, c.name, env.Data)
			}
		}
	}
}

// TestRunMapTransport runs the suite over the smallest correct Transport,
// a map of copies, as a reference for transport authors.
func TestRunMapTransport(t *testing.T) {
	transporttest.Run(t, func(t *testing.T) (postroom.Transport, func(string) ([]byte, bool)) {
		var mu sync.Mutex
		got := make(map[string][]byte)
		tr := postroom.TransportFunc(func(ctx context.Context, env *postroom.Envelope) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			mu.Lock()
			defer mu.Unlock()
			got[env.SendID] = bytes.Clone(env.Data)
			return nil
		})
		return tr, func(sendID string) ([]byte, bool) {
			mu.Lock()
			defer mu.Unlock()
			b, ok := got[sendID]
			return b, ok
		}
	})
}

// linesOK reports whether every line of data ends in CRLF, has no bare CR
// or LF, is 7-bit and holds at most 998 octets.
func linesOK(data []byte) bool {
	if len(data) == 0 {
		return false
	}
	for line := range bytes.SplitAfterSeq(data, []byte("\r\n")) {
		if len(line) == 0 { // after the final CRLF
			continue
		}
		body, ok := bytes.CutSuffix(line, []byte("\r\n"))
		if !ok || len(body) > 998 || bytes.ContainsAny(body, "\r\n") {
			return false
		}
		for _, c := range body {
			if c >= 0x80 || c == 0 {
				return false
			}
		}
	}
	return true
}

func parses(data []byte) bool {
	msg, err := mail.ReadMessage(bytes.NewReader(data))
	return err == nil && msg.Header.Get("Message-Id") != ""
}
