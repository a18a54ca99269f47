package suppression_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/testkit/dbtest"
	"github.com/postroom/postroom/internal/testkit/pgtest"
	"github.com/postroom/postroom/sqldb"
	"github.com/postroom/postroom/sqldb/pgxdb"
	"github.com/postroom/postroom/suppression"
	"github.com/postroom/postroom/transport"
)

// engines runs f on a fresh database of each engine, not migrated.
func engines(t *testing.T, f func(t *testing.T, db sqldb.DB)) {
	for _, e := range dbtest.Engines() {
		t.Run(e.Name, func(t *testing.T) { f(t, e.Open(t)) })
	}
}

// migrated returns db after Migrate.
func migrated(t testing.TB, db sqldb.DB) sqldb.DB {
	t.Helper()
	if err := suppression.Migrate(t.Context(), db); err != nil {
		t.Fatal(err)
	}
	return db
}

func TestSQLContract(t *testing.T) {
	engines(t, func(t *testing.T, db sqldb.DB) {
		migrated(t, db)
		// One database for every case: each uses account ids of its own.
		runContract(t, func(t *testing.T, opts suppression.Options) suppression.List {
			s, err := suppression.NewSQL(db, opts)
			if err != nil {
				t.Fatal(err)
			}
			return s
		})
	})
}

// schemaVersions returns how many versions the schema table records, and
// the highest.
func schemaVersions(t *testing.T, db sqldb.DB) (n, max int) {
	t.Helper()
	if err := db.QueryRow(t.Context(), `SELECT count(*), max(version) FROM postroom_suppression_schema`).Scan(&n, &max); err != nil {
		t.Fatal(err)
	}
	return n, max
}

// TestMigrateConcurrent starts four instances on one empty database at
// once: each Migrate succeeds, the schema is applied once, and a later
// Migrate does nothing.
func TestMigrateConcurrent(t *testing.T) {
	engines(t, func(t *testing.T, db sqldb.DB) {
		var wg sync.WaitGroup
		errs := make([]error, 4)
		for i := range errs {
			wg.Go(func() { errs[i] = suppression.Migrate(t.Context(), db) })
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("Migrate #%d: %v", i, err)
			}
		}
		first, _ := schemaVersions(t, db)
		if err := suppression.Migrate(t.Context(), db); err != nil {
			t.Errorf("Migrate again: %v", err)
		}
		versions, current := schemaVersions(t, db)
		if versions != first || versions != current || versions < 1 {
			t.Errorf("schema table: %d rows, version %d, %d rows before Migrate again; want versions 1 to n once each, unchanged", versions, current, first)
		}
		if db.Engine() == sqldb.Postgres && current != suppression.SchemaVersion {
			t.Errorf("PostgreSQL's schema at version %d; want %d", current, suppression.SchemaVersion)
		}
	})
}

// TestMigrateNewerSchema: a database migrated by a newer release is left
// alone and reported.
func TestMigrateNewerSchema(t *testing.T) {
	engines(t, func(t *testing.T, db sqldb.DB) {
		migrated(t, db)
		_, current := schemaVersions(t, db)
		if _, err := db.Exec(t.Context(), `INSERT INTO postroom_suppression_schema (version) VALUES ($1)`, current+1); err != nil {
			t.Fatal(err)
		}
		if err := suppression.Migrate(t.Context(), db); err == nil {
			t.Error("Migrate over a newer schema: nil; want an error")
		}
	})
}

// TestSQLCanceled: a call whose ctx has ended reports ctx's error.
func TestSQLCanceled(t *testing.T) {
	engines(t, func(t *testing.T, db sqldb.DB) {
		s, err := suppression.NewSQL(migrated(t, db), suppression.Options{})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if _, err := s.Suppressed(ctx, "a", []string{"ann@example.com"}, time.Now()); !errors.Is(err, context.Canceled) {
			t.Errorf("Suppressed with a canceled ctx: %v; want context.Canceled", err)
		}
		if _, err := s.Observe(ctx, suppression.Observation{AccountID: "a", Address: "ann@example.com", Kind: suppression.SoftBounce}); !errors.Is(err, context.Canceled) {
			t.Errorf("Observe with a canceled ctx: %v; want context.Canceled", err)
		}
	})
}

// TestSQLThreeInstances runs three instances, each with its own pool on
// one database, as three processes of an application would: they migrate
// at once, an observation made by one rejects the recipient in another's
// call, and a deletion made by the third lets it through again.
func TestSQLThreeInstances(t *testing.T) {
	dsn := pgtest.DSN(t)
	lists := make([]*suppression.SQL, 3)
	mailers := make([]*postroom.Mailer, 3)
	mems := make([]*transport.Memory, 3)
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for i := range lists {
		pool, err := pgxpool.New(t.Context(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pool.Close)
		if lists[i], err = suppression.NewSQL(pgxdb.New(pool), suppression.Options{}); err != nil {
			t.Fatal(err)
		}
		mems[i] = transport.NewMemory()
		if mailers[i], err = postroom.New(mems[i], postroom.Options{Auth: postroom.NoAuth{}, Suppressions: lists[i]}); err != nil {
			t.Fatal(err)
		}
		wg.Go(func() { errs[i] = suppression.Migrate(t.Context(), pgxdb.New(pool)) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("instance %d: Migrate: %v", i, err)
		}
	}
	call := func() *postroom.Call {
		return &postroom.Call{AccountID: "shop", Message: postroom.Message{FromEmail: "orders@shop.example.com", Subject: "s", Text: "t"},
			Recipients: []postroom.Recipient{{Email: "ann@example.com"}, {Email: "bob@example.com"}}}
	}
	if _, err := lists[0].Observe(t.Context(), suppression.Observation{AccountID: "shop", Address: "ANN@example.com", Kind: suppression.Complaint}); err != nil {
		t.Fatal(err)
	}
	results, err := mailers[1].Send(t.Context(), call())
	if err != nil {
		t.Fatal(err)
	}
	if results[0].Status != postroom.StatusRejected || results[0].Code != postroom.ReasonSpam || results[1].Status != postroom.StatusSent || mems[1].Len() != 1 {
		t.Errorf("instance 1 after instance 0's complaint: %+v, %d messages; want ann rejected (spam), bob sent", results, mems[1].Len())
	}
	if had, err := lists[2].Delete(t.Context(), "shop", "ann@example.com", "", ""); err != nil || !had {
		t.Fatalf("instance 2: Delete = %v, %v", had, err)
	}
	if results, err = mailers[1].Send(t.Context(), call()); err != nil || results[0].Status != postroom.StatusSent {
		t.Errorf("instance 1 after instance 2's Delete: %+v, %v; want ann sent", results, err)
	}
}

// TestSQLPruneSoftBounces: Prune deletes the rows of soft bounces too old
// to count and keeps the others.
func TestSQLPruneSoftBounces(t *testing.T) {
	engines(t, func(t *testing.T, db sqldb.DB) {
		s, err := suppression.NewSQL(migrated(t, db), suppression.Options{})
		if err != nil {
			t.Fatal(err)
		}
		now := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
		for addr, at := range map[string]time.Time{"stale@example.com": now.Add(-8 * 24 * time.Hour), "recent@example.com": now.Add(-24 * time.Hour)} {
			if _, err := s.Observe(t.Context(), suppression.Observation{AccountID: "a", Address: addr, Kind: suppression.SoftBounce, At: at}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.Prune(t.Context(), now); err != nil {
			t.Fatal(err)
		}
		var left []string
		rows, err := db.Query(t.Context(), `SELECT address FROM postroom_suppression_soft_bounces ORDER BY address`)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var a string
			if err := rows.Scan(&a); err != nil {
				t.Fatal(err)
			}
			left = append(left, a)
		}
		rows.Close()
		if rows.Err() != nil || len(left) != 1 || left[0] != "recent@example.com" {
			t.Errorf("soft bounces left: %v, %v; want recent@ alone", left, rows.Err())
		}
	})
}

// TestSQLThreeInstancesScopes runs three instances on one database, each
// with its own pool and Mailer: instance 0 observes ann's one-click
// unsubscribe from news, instance 1 bob's complaint about a newsletter;
// instance 2's Mailer then rejects news for ann and every list's mail
// for bob, sends ann the other list, and sends both their receipts.
func TestSQLThreeInstancesScopes(t *testing.T) {
	dsn := pgtest.DSN(t)
	lists := make([]*suppression.SQL, 3)
	mailers := make([]*postroom.Mailer, 3)
	mems := make([]*transport.Memory, 3)
	for i := range lists {
		pool, err := pgxpool.New(t.Context(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pool.Close)
		if err := suppression.Migrate(t.Context(), pgxdb.New(pool)); err != nil {
			t.Fatalf("instance %d: Migrate: %v", i, err)
		}
		if lists[i], err = suppression.NewSQL(pgxdb.New(pool), suppression.Options{}); err != nil {
			t.Fatal(err)
		}
		mems[i] = transport.NewMemory()
		if mailers[i], err = postroom.New(mems[i], postroom.Options{Auth: postroom.NoAuth{}, Suppressions: lists[i]}); err != nil {
			t.Fatal(err)
		}
	}
	const news, deals = "news.shop.example.com", "deals.shop.example.com"
	if _, err := lists[0].Observe(t.Context(), suppression.Observation{AccountID: "shop", Address: "ann@example.com", Kind: suppression.Unsubscribe, List: news}); err != nil {
		t.Fatal(err)
	}
	if _, err := lists[1].Observe(t.Context(), suppression.Observation{AccountID: "shop", Address: "Bob@example.com", Kind: suppression.Complaint, List: news}); err != nil {
		t.Fatal(err)
	}
	send := func(list string) string {
		t.Helper()
		call := &postroom.Call{AccountID: "shop", Message: postroom.Message{FromEmail: "shop@shop.example.com", Subject: "s", Text: "t"},
			Recipients: []postroom.Recipient{{Email: "ann@example.com"}, {Email: "bob@example.com"}, {Email: "cy@example.com"}}}
		if list != "" {
			call.Message.Headers = []postroom.Header{postroom.ListID("", list)}
		}
		before := mems[2].Len()
		results, err := mailers[2].Send(t.Context(), call)
		if err != nil {
			t.Fatal(err)
		}
		out := ""
		for _, r := range results {
			out += fmt.Sprintf("%s %s %s; ", r.Email, r.Status, r.Code)
		}
		return fmt.Sprintf("%s%d sent", out, mems[2].Len()-before)
	}
	for _, tt := range []struct{ list, want string }{
		{news, "ann@example.com rejected unsub; bob@example.com rejected spam; cy@example.com sent ; 1 sent"},
		{deals, "ann@example.com sent ; bob@example.com rejected spam; cy@example.com sent ; 2 sent"},
		{"", "ann@example.com sent ; bob@example.com sent ; cy@example.com sent ; 3 sent"},
	} {
		if got := send(tt.list); got != tt.want {
			t.Errorf("instance 2, list %q:\n%s\nwant\n%s", tt.list, got, tt.want)
		}
	}
}
