package idempotency

import (
	"context"
	"fmt"
	"testing"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/testkit/dbtest"
)

// BenchmarkRun measures what the record costs a 100-recipient call with a
// transport that accepts at once: m.Run alone, then Run over Memory and
// over SQL on each engine (pgtest's PostgreSQL, on this machine, fsync
// off; SQLite in a file of the test's temporary folder). Each iteration
// is a new key.
func BenchmarkRun(b *testing.B) {
	tr := postroom.TransportFunc(func(context.Context, *postroom.Envelope) error { return nil })
	m, err := postroom.New(tr, postroom.Options{Auth: postroom.NoAuth{}})
	if err != nil {
		b.Fatal(err)
	}
	call := newCall(addrs(100)...)
	b.Run("plain", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := m.Run(b.Context(), postroom.OpSend, call, postroom.RunOptions{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	stores := map[string]func(b *testing.B) Store{
		"memory": func(b *testing.B) Store {
			s, err := NewMemory(Options{})
			if err != nil {
				b.Fatal(err)
			}
			return s
		},
	}
	names := []string{"memory"}
	for _, e := range dbtest.Engines() {
		names = append(names, e.Name)
		stores[e.Name] = func(b *testing.B) Store { return newSQL(b, e, Options{}) }
	}
	for _, name := range names {
		b.Run(name, func(b *testing.B) {
			s := stores[name](b)
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				n++
				if _, err := Run(b.Context(), s, m, fmt.Sprint("k", n), postroom.OpSend, call); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
