package benchmarks

import (
	"testing"

	"github.com/postroom/postroom/internal/testkit/bench"
	"github.com/postroom/postroom/internal/testkit/fixture"
	"github.com/postroom/postroom/internal/testkit/pgtest"
	"github.com/postroom/postroom/sqldb/pgxdb"
	"github.com/postroom/postroom/templatestore"
)

// BenchmarkSendTemplateStore sends a one-recipient send_template call whose
// bodies come from a template store: Memory (a map read) against SQL (a
// query per body to a real PostgreSQL on loopback, from internal/pgtest;
// skipped when PostgreSQL is not installed), each with the Mailer's
// compiled-template cache warm and off (cold: every call compiles).
func BenchmarkSendTemplateStore(b *testing.B) {
	w := fixture.Shared(b)
	account := w.Base.AccountID
	b.Run("memory", func(b *testing.B) {
		store := templatestore.NewMemory()
		for id, source := range bench.StoredTemplates(w) {
			if err := store.Put(account, id, source); err != nil {
				b.Fatal(err)
			}
		}
		b.Run("warm", func(b *testing.B) { bench.SendTemplate(b, w, store, true) })
		b.Run("cold", func(b *testing.B) { bench.SendTemplate(b, w, store, false) })
	})
	b.Run("sql", func(b *testing.B) {
		db := pgtest.NewPool(b)
		if err := templatestore.Migrate(b.Context(), pgxdb.New(db)); err != nil {
			b.Fatal(err)
		}
		store := templatestore.NewSQL(pgxdb.New(db))
		for id, source := range bench.StoredTemplates(w) {
			if err := store.Put(b.Context(), account, id, source); err != nil {
				b.Fatal(err)
			}
		}
		b.Run("warm", func(b *testing.B) { bench.SendTemplate(b, w, store, true) })
		b.Run("cold", func(b *testing.B) { bench.SendTemplate(b, w, store, false) })
	})
}
