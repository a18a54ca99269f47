package benchmarks

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/testkit/bench"
	"github.com/postroom/postroom/internal/testkit/fixture"
	"github.com/postroom/postroom/internal/testkit/pgtest"
	"github.com/postroom/postroom/sqldb/pgxdb"
	"github.com/postroom/postroom/suppression"
)

// Sizes of BenchmarkSuppression: the call, the list, and which of the
// call's recipients are listed (every tenth).
const (
	suppressionCall  = 25000
	suppressionTable = 100000
	suppressionEvery = 10
)

// BenchmarkSuppression is the suppression list's cost to the largest
// call: 25,000 recipients, every tenth listed, in a list of 100,000
// entries (the others are addresses the call does not have).
//
//   - validate/none, validate/memory, validate/sql: Mailer.Validate of the
//     call (everything a call does before rendering) without a list, and
//     with suppression.Memory or suppression.SQL: the difference is the
//     lookup and the marking of the listed recipients (goals: at most
//     1 µs a recipient in memory, 0.25 s a call on PostgreSQL).
//   - lookup/memory, lookup/sql: the list's Suppressed alone, the one
//     batched lookup of the call's 25,000 addresses.
//   - lookup/sql-per-address: the obvious way beside it, one query per
//     address (run it with -benchtime 3x).
//
// The sql cases use a real PostgreSQL on loopback (internal/pgtest) and
// are skipped when it is not installed.
func BenchmarkSuppression(b *testing.B) {
	w := fixture.Shared(b)
	call := w.Call(suppressionCall)
	account := call.AccountID
	addrs := make([]string, len(call.Recipients))
	for i, r := range call.Recipients {
		addrs[i] = strings.ToLower(r.Email)
	}
	entries := suppressionEntries(account, addrs)
	now := time.Now()

	b.Run("validate/none", func(b *testing.B) { benchValidate(b, call, nil) })
	mem, err := suppression.NewMemory(suppression.Options{})
	if err != nil {
		b.Fatal(err)
	}
	for _, e := range entries {
		if _, err := mem.Add(b.Context(), e); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("validate/memory", func(b *testing.B) { benchValidate(b, call, mem) })
	b.Run("lookup/memory", func(b *testing.B) { benchLookup(b, mem, account, addrs, now, len(addrs)/suppressionEvery) })

	b.Run("sql", func(b *testing.B) {
		pool, err := pgxpool.New(b.Context(), pgtest.DSN(b))
		if err != nil {
			b.Fatal(err)
		}
		defer pool.Close()
		if err := suppression.Migrate(b.Context(), pgxdb.New(pool)); err != nil {
			b.Fatal(err)
		}
		fillSQL(b, pool, entries)
		list, err := suppression.NewSQL(pgxdb.New(pool), suppression.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.Run("validate", func(b *testing.B) { benchValidate(b, call, list) })
		b.Run("lookup", func(b *testing.B) { benchLookup(b, list, account, addrs, now, len(addrs)/suppressionEvery) })
		b.Run("lookup-per-address", func(b *testing.B) {
			found := 0
			for b.Loop() {
				found = 0
				for _, a := range addrs {
					var reason string
					err := pool.QueryRow(b.Context(), `SELECT reason FROM postroom_suppressions
						WHERE account_id = $1 AND address = $2
						AND created_at <= $3 AND (expires_at IS NULL OR expires_at > $3)`, account, a, now).Scan(&reason)
					switch err {
					case nil:
						found++
					case pgx.ErrNoRows:
					default:
						b.Fatal(err)
					}
				}
			}
			if found != len(addrs)/suppressionEvery {
				b.Fatalf("found %d listed; want %d", found, len(addrs)/suppressionEvery)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(addrs)), "ns/recipient")
		})
	})
}

// BenchmarkSuppressionScopes is BenchmarkSuppression with entries of
// every scope, and a call of list mail (its List-Id): every tenth
// recipient has an entry of the call's list and one of all lists (both
// cover the message), every tenth from the fifth one of another list (it
// does not), in a list of 100,000 entries. The one lookup returns the
// 7,500 entries of the call's addresses, all scopes at once; the Mailer
// keeps those that cover the call's list and rejects 2,500 recipients.
// The cases are BenchmarkSuppression's, without the per-address one.
func BenchmarkSuppressionScopes(b *testing.B) {
	const list, other = "news.shop.example.com", "deals.shop.example.com"
	w := fixture.Shared(b)
	call := *w.Call(suppressionCall)
	call.Message.Headers = append(slices.Clone(call.Message.Headers), postroom.ListID("Shop news", list))
	account := call.AccountID
	addrs := make([]string, len(call.Recipients))
	for i, r := range call.Recipients {
		addrs[i] = strings.ToLower(r.Email)
	}
	created := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	var entries []suppression.Entry
	for i := 0; i < len(addrs); i += suppressionEvery {
		entries = append(entries,
			suppression.Entry{AccountID: account, Address: addrs[i], Reason: postroom.ReasonUnsub, Detail: "list " + list, Created: created, Scope: postroom.ScopeList, List: list},
			suppression.Entry{AccountID: account, Address: addrs[i], Reason: postroom.ReasonSpam, Created: created, Scope: postroom.ScopeLists})
		if j := i + suppressionEvery/2; j < len(addrs) {
			entries = append(entries, suppression.Entry{AccountID: account, Address: addrs[j], Reason: postroom.ReasonUnsub, Created: created, Scope: postroom.ScopeList, List: other})
		}
	}
	found := len(entries)
	for i := 0; len(entries) < suppressionTable; i++ {
		entries = append(entries, suppression.Entry{AccountID: account, Address: fmt.Sprintf("other%06d@example.net", i), Reason: postroom.ReasonSoftBounce, Created: created, Expires: created.AddDate(1, 0, 0)})
	}
	now := time.Now()

	mem, err := suppression.NewMemory(suppression.Options{})
	if err != nil {
		b.Fatal(err)
	}
	for _, e := range entries {
		if _, err := mem.Add(b.Context(), e); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("validate/memory", func(b *testing.B) { benchValidate(b, &call, mem) })
	b.Run("lookup/memory", func(b *testing.B) { benchLookup(b, mem, account, addrs, now, found) })
	b.Run("sql", func(b *testing.B) {
		pool, err := pgxpool.New(b.Context(), pgtest.DSN(b))
		if err != nil {
			b.Fatal(err)
		}
		defer pool.Close()
		if err := suppression.Migrate(b.Context(), pgxdb.New(pool)); err != nil {
			b.Fatal(err)
		}
		fillSQL(b, pool, entries)
		sl, err := suppression.NewSQL(pgxdb.New(pool), suppression.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.Run("validate", func(b *testing.B) { benchValidate(b, &call, sl) })
		b.Run("lookup", func(b *testing.B) { benchLookup(b, sl, account, addrs, now, found) })
	})
}

// suppressionEntries is the list of the benchmark: every tenth of addrs
// and as many other addresses as make suppressionTable entries.
func suppressionEntries(account string, addrs []string) []suppression.Entry {
	created := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	var entries []suppression.Entry
	for i := 0; i < len(addrs); i += suppressionEvery {
		entries = append(entries, suppression.Entry{AccountID: account, Address: addrs[i], Reason: postroom.ReasonHardBounce, Detail: "550 5.1.1 user unknown", Created: created})
	}
	for i := 0; len(entries) < suppressionTable; i++ {
		entries = append(entries, suppression.Entry{AccountID: account, Address: fmt.Sprintf("other%06d@example.net", i), Reason: postroom.ReasonSoftBounce, Created: created, Expires: created.AddDate(1, 0, 0)})
	}
	return entries
}

// fillSQL copies entries into the table in one COPY, then analyzes it.
func fillSQL(b *testing.B, pool *pgxpool.Pool, entries []suppression.Entry) {
	rows := make([][]any, len(entries))
	for i, e := range entries {
		var expires any
		if !e.Expires.IsZero() {
			expires = e.Expires
		}
		scope := e.Scope
		if scope == "" {
			scope = postroom.ScopeAll
		}
		rows[i] = []any{e.AccountID, e.Address, string(e.Reason), e.Detail, "", e.Created, expires, string(scope), e.List}
	}
	if _, err := pool.CopyFrom(b.Context(), pgx.Identifier{"postroom_suppressions"},
		[]string{"account_id", "address", "reason", "detail", "send_id", "created_at", "expires_at", "scope", "list_id"}, pgx.CopyFromRows(rows)); err != nil {
		b.Fatal(err)
	}
	if _, err := pool.Exec(b.Context(), `ANALYZE postroom_suppressions`); err != nil {
		b.Fatal(err)
	}
}

// benchValidate runs Mailer.Validate of call with list as
// Options.Suppressions (none when nil), and checks that every tenth
// recipient is rejected when there is a list.
func benchValidate(b *testing.B, call *postroom.Call, list postroom.Suppressions) {
	m, err := postroom.New(postroom.TransportFunc(func(context.Context, *postroom.Envelope) error { return nil }),
		postroom.Options{Auth: postroom.NoAuth{}, Suppressions: list})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	var results []postroom.Result
	cpu := bench.MeasureCPU()
	for b.Loop() {
		if results, err = m.Validate(b.Context(), postroom.OpSend, call); err != nil {
			b.Fatal(err)
		}
	}
	rejected := 0
	for _, r := range results {
		if r.Status == postroom.StatusRejected {
			rejected++
		}
	}
	if want := len(call.Recipients) / suppressionEvery; list != nil && rejected != want {
		b.Fatalf("%d recipients rejected; want %d", rejected, want)
	}
	cpu(b, len(call.Recipients), "cpu-ns/recipient")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(call.Recipients)), "ns/recipient")
}

// benchLookup runs list's one batched lookup of addrs, and checks that it
// found want entries.
func benchLookup(b *testing.B, list postroom.Suppressions, account string, addrs []string, now time.Time, want int) {
	b.ReportAllocs()
	var found []postroom.Suppression
	var err error
	cpu := bench.MeasureCPU()
	for b.Loop() {
		if found, err = list.Suppressed(b.Context(), account, addrs, now); err != nil {
			b.Fatal(err)
		}
	}
	if len(found) != want {
		b.Fatalf("found %d entries; want %d", len(found), want)
	}
	cpu(b, len(addrs), "cpu-ns/recipient")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(addrs)), "ns/recipient")
}
