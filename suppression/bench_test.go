package suppression_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/postroom/postroom/internal/testkit/bench"
	"github.com/postroom/postroom/internal/testkit/dbtest"
	"github.com/postroom/postroom/sqldb"
	"github.com/postroom/postroom/suppression"
)

// Sizes of BenchmarkSQLSuppressed: the call's addresses, how many of them
// are listed, and the other entries of the account's list.
const (
	benchAddresses = 25000
	benchListed    = 250
	benchOthers    = 25000
)

// BenchmarkSQLSuppressed is SQL.Suppressed of a call of 25,000
// addresses (shuffled), 250 of them listed, in a list of 25,250 entries,
// on each
// engine: the one batched lookup a Mailer makes of the largest call
// (goal on SQLite: at most 0.1 s). cpu-ms/lookup is this process's CPU
// time: SQLite's whole work, the client's share of PostgreSQL's (the
// server's is not counted).
//
//	go test -run '^$' -bench SQLSuppressed ./suppression
func BenchmarkSQLSuppressed(b *testing.B) {
	created := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	addrs := make([]string, benchAddresses)
	var rows [][]any
	for i := range addrs {
		addrs[i] = fmt.Sprintf("user%05d@example.com", i)
		if i%(benchAddresses/benchListed) == 0 {
			rows = append(rows, []any{"shop", addrs[i], "hard-bounce", "550 5.1.1 user unknown", "", created, nil, "all", ""})
		}
	}
	for i := range benchOthers {
		rows = append(rows, []any{"shop", fmt.Sprintf("other%06d@example.net", i), "soft-bounce", "", "", created, created.AddDate(1, 0, 0), "all", ""})
	}
	// A call's recipients come in no order of the table's.
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(addrs), func(i, j int) { addrs[i], addrs[j] = addrs[j], addrs[i] })
	now := time.Now()
	for _, e := range dbtest.Engines() {
		b.Run(e.Name, func(b *testing.B) {
			db := migrated(b, e.Open(b))
			if _, err := db.CopyFrom(b.Context(), "postroom_suppressions",
				[]string{"account_id", "address", "reason", "detail", "send_id", "created_at", "expires_at", "scope", "list_id"}, rows); err != nil {
				b.Fatal(err)
			}
			if db.Engine() == sqldb.Postgres {
				if _, err := db.Exec(b.Context(), `ANALYZE postroom_suppressions`); err != nil {
					b.Fatal(err)
				}
			}
			s, err := suppression.NewSQL(db, suppression.Options{})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			var found int
			cpu := bench.MeasureCPU()
			for b.Loop() {
				got, err := s.Suppressed(b.Context(), "shop", addrs, now)
				if err != nil {
					b.Fatal(err)
				}
				found = len(got)
			}
			if found != benchListed {
				b.Fatalf("found %d entries; want %d", found, benchListed)
			}
			cpu(b, 1e6, "cpu-ms/lookup")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e6, "ms/lookup")
		})
	}
}
