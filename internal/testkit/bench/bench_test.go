package bench

import (
	"bytes"
	"context"
	"html"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/testkit/fixture"
	"github.com/postroom/postroom/postroomtest"
	"github.com/postroom/postroom/transport"
)

// TestSameWork keeps the comparison honest: both pipelines, and the static
// call that MIMEPostroom sends, hand over one message per recipient, and the
// html part decodes to the same bytes on both sides.
func TestSameWork(t *testing.T) {
	w := fixture.Shared(t)
	const n = 40
	static, err := w.StaticCall(n)
	if err != nil {
		t.Fatal(err)
	}
	check := []int{0, 2, 3, 5, 8, 16 + 3, n - 1} // plain, Zoë, O'Brien, Ana & Luis, Mårten, a repeat, the last
	for _, tc := range []struct {
		name string
		call *postroom.Call
	}{
		{"workload", w.Call(n)},
		{"static", static},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := map[string][2]postroom.Envelope{}
			for side, send := range []func(context.Context, postroom.Transport) error{
				func(ctx context.Context, tr postroom.Transport) error {
					m, err := NewMailer(tr, Concurrency())
					if err != nil {
						return err
					}
					return SendAll(ctx, m, tc.call)
				},
				func(ctx context.Context, tr postroom.Transport) error {
					return (&Obvious{Transport: tr, Concurrency: Concurrency()}).Send(ctx, fixture.PlainCall(tc.call))
				},
			} {
				rec := transport.NewMemory()
				var count atomic.Int64
				tr := postroom.TransportFunc(func(ctx context.Context, env *postroom.Envelope) error {
					count.Add(1)
					return rec.Send(ctx, env)
				})
				if err := send(t.Context(), tr); err != nil {
					t.Fatalf("side %d: %v", side, err)
				}
				if count.Load() != n {
					t.Fatalf("side %d: the transport saw %d messages, want %d", side, count.Load(), n)
				}
				for _, env := range rec.Envelopes() {
					if len(env.To) != 1 {
						t.Fatalf("side %d: envelope to %q, want one address", side, env.To)
					}
					pair := got[env.To[0]]
					if pair[side].Data != nil {
						t.Fatalf("side %d: two messages to %s", side, env.To[0])
					}
					pair[side] = env
					got[env.To[0]] = pair
				}
			}
			if len(got) != n {
				t.Fatalf("%d distinct recipients got messages, want %d", len(got), n)
			}
			for _, i := range check {
				addr := tc.call.Recipients[i].Email
				pair := got[addr]
				t.Run(addr, func(t *testing.T) {
					postroomHTML := htmlPart(t, pair[0].Data)
					obviousHTML := htmlPart(t, pair[1].Data)
					// The two escape differently what needs escaping (raymond
					// writes ' as &apos;, handlebars.js, which postroom
					// follows, as &#x27; and escapes = and ` too): they must
					// say the same text. The bytes of postroom's side are
					// checked against the fixture's rendering below.
					p, o := html.UnescapeString(string(postroomHTML)), html.UnescapeString(string(obviousHTML))
					if p != o {
						i := 0
						for i < len(p) && i < len(o) && p[i] == o[i] {
							i++
						}
						t.Errorf("html parts differ at %d:\npostroom %q\n obvious %q", i, p[max(0, i-80):min(len(p), i+80)], o[max(0, i-80):min(len(o), i+80)])
					}
					if bytes.Contains(postroomHTML, []byte("{{")) {
						t.Error("the html still has a placeholder")
					}
					want, err := w.Rendered(i)
					if err != nil {
						t.Fatal(err)
					}
					if tc.name == "static" {
						want, _ = w.Rendered(0)
					}
					// MIME writes the bodies' line breaks as CRLF.
					if string(postroomHTML) != strings.ReplaceAll(want.HTML, "\n", "\r\n") {
						t.Errorf("html is not sample %d's:\n got %q\nwant %q", i%16, head(postroomHTML), head([]byte(want.HTML)))
					}
				})
			}
		})
	}
}

func head(b []byte) []byte {
	return b[:min(len(b), 200)]
}

// htmlPart returns the decoded text/html part of a message, read back with
// postroomtest.Parse (which checks the line rules on both sides).
func htmlPart(t *testing.T, data []byte) []byte {
	t.Helper()
	m := postroomtest.Parse(t, data)
	for _, p := range m.Parts {
		if p.Type() == "text/html" {
			return p.Body
		}
	}
	t.Fatalf("the message has no text/html part: %v", m.Paths())
	return nil
}
