package events_test

import (
	"crypto/md5"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/postroom/postroom/events"
	"github.com/postroom/postroom/internal/testkit/pgtest"
	"github.com/postroom/postroom/sqldb/pgxdb"
)

// benchDays is the days BenchmarkSearch spreads its messages over, one
// partition each: SQLOptions.Retention's default.
const benchDays = 30

// benchEventsEnv names the number of events BenchmarkSearch generates;
// unset, 100,000. docs/BENCHMARKS.md has the figures of a larger log.
const benchEventsEnv = "POSTROOM_BENCH_EVENTS"

// BenchmarkSearch is message activity's search on PostgreSQL in a log of
// N events (benchEventsEnv), generated in the database with
// generate_series as a sender of many accounts writes them: 10 accounts,
// one address for every 3 messages (so about 3 messages per address,
// spread over the whole period), the messages spread evenly over 30 days
// (30 day partitions, as Rotate keeps them by default), a deferral before
// 1 message in 20 and a bounce after 1 in 25. The
// sub-benchmarks each ask for a different address (or send id) at each
// iteration, so that the pages read are not the same ones again:
//
//   - address: Search by address (another letter case), a page of 20;
//   - address-state: the same, the bounced ones alone;
//   - info: Info by send id.
//
// Run it with -timeout 0 for large logs; it is not run by CI.
func BenchmarkSearch(b *testing.B) {
	n := 100_000
	if v := os.Getenv(benchEventsEnv); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1000 {
			b.Fatalf("%s=%q: want a number of events, at least 1000", benchEventsEnv, v)
		}
	}
	pool := pgtest.NewPool(b)
	if err := events.Migrate(b.Context(), pgxdb.New(pool)); err != nil {
		b.Fatal(err)
	}
	s, err := events.NewSQL(pgxdb.New(pool), events.SQLOptions{})
	if err != nil {
		b.Fatal(err)
	}
	ctx := b.Context()
	start := time.Now()
	const accounts = 10
	addresses := n / 3
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	// Message g: account g % 10, address user(g % addresses) (its
	// messages all in one account: (g % addresses) % 10 = g % 10 when
	// addresses is a multiple of 10), send id md5(g).
	addresses -= addresses % accounts
	// The messages are spread evenly over benchDays days, one partition
	// each, as a log that Rotate keeps for benchDays days.
	step := time.Duration(float64(benchDays*24*time.Hour) / (float64(n) / 1.09)).Truncate(time.Microsecond)
	conn, err := pool.Acquire(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `DO $$ DECLARE p text; BEGIN
		FOR p IN SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
		         WHERE i.inhparent = 'postroom_events'::regclass AND c.relname <> 'postroom_events_default' LOOP
			EXECUTE 'DROP TABLE ' || quote_ident(p);
		END LOOP; END $$`); err != nil {
		b.Fatal(err)
	}
	for d := range benchDays + 1 {
		day := t0.AddDate(0, 0, d)
		if _, err := conn.Exec(ctx, fmt.Sprintf(`CREATE TABLE postroom_events_p%s PARTITION OF postroom_events FOR VALUES FROM ('%s') TO ('%s')`,
			day.Format("20060102"), day.Format(time.RFC3339), day.AddDate(0, 0, 1).Format(time.RFC3339))); err != nil {
			b.Fatal(err)
		}
	}
	// Loaded without the secondary indexes, then built again from their
	// definitions: one sorted build each instead of N random inserts.
	var indexes []string
	if err := conn.QueryRow(ctx, `SELECT array_agg(indexdef) FROM pg_indexes WHERE tablename = 'postroom_events' AND indexname <> 'postroom_events_pkey'`).Scan(&indexes); err != nil {
		b.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `SET maintenance_work_mem = '1GB'`); err != nil {
		b.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `DO $$ DECLARE i text; BEGIN
		FOR i IN SELECT indexname FROM pg_indexes WHERE tablename = 'postroom_events' AND indexname <> 'postroom_events_pkey' LOOP
			EXECUTE 'DROP INDEX ' || quote_ident(i);
		END LOOP; END $$`); err != nil {
		b.Fatal(err)
	}
	for _, q := range []string{
		`INSERT INTO postroom_events (account_id, event, send_id, email, reason, status, diagnostic, at)
		 SELECT 'acct' || (g % 10), 'deferral', md5(g::text), 'User' || (g % $2) || '@example' || (g % 97) || '.com',
		        'soft-bounce', '4.2.2', '452 4.2.2 mailbox full', $3::timestamptz + g * $4::interval
		 FROM generate_series(1, $1) g WHERE g % 20 = 0`,
		`INSERT INTO postroom_events (account_id, event, send_id, email, at)
		 SELECT 'acct' || (g % 10), 'send', md5(g::text), 'User' || (g % $2) || '@example' || (g % 97) || '.com',
		        $3::timestamptz + g * $4::interval + CASE WHEN g % 20 = 0 THEN interval '10 minutes' ELSE interval '0' END
		 FROM generate_series(1, $1) g`,
		`INSERT INTO postroom_events (account_id, event, send_id, email, reason, status, diagnostic, at)
		 SELECT 'acct' || (g % 10), 'hard_bounce', md5(g::text), 'User' || (g % $2) || '@example' || (g % 97) || '.com',
		        'bad-mailbox', '5.1.1', '550 5.1.1 no such user', $3::timestamptz + g * $4::interval + interval '1 hour'
		 FROM generate_series(1, $1) g WHERE g % 25 = 0`,
	} {
		// The three statements make about n events: the sends, plus 5%
		// deferrals and 4% bounces, so n/1.09 messages.
		if _, err := conn.Exec(ctx, q, int(float64(n)/1.09), addresses, t0, step); err != nil {
			b.Fatal(err)
		}
	}
	for _, def := range indexes {
		// A partitioned table's definitions say ON ONLY (the parent
		// alone): built ON the table, each partition has its index.
		if _, err := conn.Exec(ctx, strings.Replace(def, " ON ONLY ", " ON ", 1)); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := pool.Exec(ctx, `VACUUM ANALYZE postroom_events`); err != nil {
		b.Fatal(err)
	}
	var rows int64
	var size string
	if err := pool.QueryRow(ctx, `SELECT count(*), (SELECT pg_size_pretty(sum(pg_total_relation_size(inhrelid))) FROM pg_inherits WHERE inhparent = 'postroom_events'::regclass) FROM postroom_events`).Scan(&rows, &size); err != nil {
		b.Fatal(err)
	}
	b.Logf("%d events (%s with indexes) generated in %v", rows, size, time.Since(start).Round(time.Second))

	messages := int(float64(n) / 1.09)
	b.Run("address", func(b *testing.B) {
		i := 0
		for b.Loop() {
			i++
			a := (i * 7919) % addresses
			ms, _, err := s.Search(ctx, events.Query{AccountID: "acct" + strconv.Itoa(a%accounts), Email: fmt.Sprintf("user%d@EXAMPLE%d.com", a, a%97), Limit: 20})
			if err != nil {
				b.Fatal(err)
			}
			if len(ms) == 0 {
				b.Fatalf("no messages to address %d", a)
			}
		}
	})
	b.Run("address-state", func(b *testing.B) {
		i := 0
		for b.Loop() {
			i++
			a := (i * 7919) % addresses
			if _, _, err := s.Search(ctx, events.Query{AccountID: "acct" + strconv.Itoa(a%accounts), Email: fmt.Sprintf("user%d@example%d.com", a, a%97), State: events.StateBounced, Limit: 20}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("info", func(b *testing.B) {
		i := 0
		for b.Loop() {
			i++
			g := 1 + (i*7919)%messages
			id := fmt.Sprintf("%x", md5.Sum([]byte(strconv.Itoa(g))))
			if _, ok, err := s.Info(ctx, "acct"+strconv.Itoa(g%accounts), id); err != nil || !ok {
				b.Fatalf("Info of message %d: %v %v", g, ok, err)
			}
		}
	})
}
