package suppression

import (
	"fmt"
	"testing"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/sqlschema"
	"github.com/postroom/postroom/internal/testkit/pgtest"
	"github.com/postroom/postroom/sqldb/pgxdb"
	"github.com/postroom/postroom/transport"
)

// TestMigrateFromVersion1 upgrades a database at schema version 1 that
// holds an entry of each reason (one expiring, with a send id and a
// detail), in two accounts, and a count of soft bounces: Migrate brings it
// to SchemaVersion, every row keeps what it had, an unsub entry becomes
// all lists (sql/002_scopes.sql) and the others all mail; the Mailer then
// rejects the unsubscribed address's list mail and sends its receipts,
// and the address can take a list's entry beside its old one.
func TestMigrateFromVersion1(t *testing.T) {
	ctx := t.Context()
	pool := pgtest.NewPool(t)
	ms, err := sqlschema.Load(schema, "sql/*.sql", SchemaVersion)
	if err != nil {
		t.Fatal(err)
	}
	if err := sqlschema.Migrate(ctx, pgxdb.New(pool), migrateLock, "postroom_suppression_schema", ms[:1], 1); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`INSERT INTO postroom_suppressions VALUES ('shop', 'hard@example.com', 'hard-bounce', '550 5.1.1 user unknown', 'id1', '2026-01-01T00:00:00Z', NULL)`,
		`INSERT INTO postroom_suppressions VALUES ('shop', 'soft@example.com', 'soft-bounce', '452 4.2.2 mailbox full', 'id2', '2026-01-02T00:00:00Z', '2099-01-09T00:00:00Z')`,
		`INSERT INTO postroom_suppressions VALUES ('shop', 'spam@example.com', 'spam', '', 'id3', '2026-01-03T00:00:00Z', NULL)`,
		`INSERT INTO postroom_suppressions VALUES ('shop', 'unsub@example.com', 'unsub', 'one-click', 'id4', '2026-01-04T00:00:00Z', NULL)`,
		`INSERT INTO postroom_suppressions VALUES ('shop', 'manual@example.com', 'manual', 'asked by phone', '', '2026-01-05T00:00:00Z', NULL)`,
		`INSERT INTO postroom_suppressions VALUES ('other', 'unsub@example.com', 'manual', '', '', '2026-01-06T00:00:00Z', NULL)`,
		`INSERT INTO postroom_suppression_soft_bounces VALUES ('shop', 'full@example.com', ARRAY['2026-11-19T00:00:00Z'::timestamptz])`,
	} {
		if _, err := pool.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	rows := func() string {
		t.Helper()
		var s string
		if err := pool.QueryRow(ctx, `SELECT string_agg(concat_ws(' ', account_id, address, reason, detail, send_id,
				to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD'), coalesce(to_char(expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD'), '-')), '; '
				ORDER BY account_id, address) FROM postroom_suppressions`).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	before := rows()
	if err := Migrate(ctx, pgxdb.New(pool)); err != nil {
		t.Fatal(err)
	}
	var version int
	if err := pool.QueryRow(ctx, `SELECT max(version) FROM postroom_suppression_schema`).Scan(&version); err != nil {
		t.Fatal(err)
	}
	if version != SchemaVersion {
		t.Errorf("after Migrate: version %d, want %d", version, SchemaVersion)
	}
	if after := rows(); after != before {
		t.Errorf("after Migrate the rows read\n%s\nwant, as before,\n%s", after, before)
	}
	var scopes string
	if err := pool.QueryRow(ctx, `SELECT string_agg(account_id || ' ' || address || ' ' || scope || ' ' || list_id || '|', ' ' ORDER BY account_id, address)
		FROM postroom_suppressions`).Scan(&scopes); err != nil {
		t.Fatal(err)
	}
	if want := "other unsub@example.com all | shop hard@example.com all | shop manual@example.com all | shop soft@example.com all | shop spam@example.com all | shop unsub@example.com lists |"; scopes != want {
		t.Errorf("scopes after Migrate:\n%s\nwant\n%s", scopes, want)
	}

	now := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	s, err := NewSQL(pgxdb.New(pool), Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	// The soft bounce counted before (a day ago) still counts: two more
	// list it.
	for range 2 {
		if _, err := s.Observe(ctx, Observation{AccountID: "shop", Address: "full@example.com", Kind: SoftBounce, At: now}); err != nil {
			t.Fatal(err)
		}
	}
	m, err := postroom.New(transport.NewMemory(), postroom.Options{Auth: postroom.NoAuth{}, Suppressions: s, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	outcomes := func(list string) string {
		t.Helper()
		call := &postroom.Call{AccountID: "shop", Message: postroom.Message{FromEmail: "shop@shop.example.com", Subject: "s", Text: "t"}}
		for _, a := range []string{"hard", "soft", "spam", "unsub", "manual", "full", "ok"} {
			call.Recipients = append(call.Recipients, postroom.Recipient{Email: a + "@example.com"})
		}
		if list != "" {
			call.Message.Headers = []postroom.Header{postroom.ListID("", list)}
		}
		results, err := m.Validate(ctx, postroom.OpSend, call)
		if err != nil {
			t.Fatal(err)
		}
		out := ""
		for i, r := range results {
			out += fmt.Sprintf("%s:%s ", call.Recipients[i].Email[:len(call.Recipients[i].Email)-len("@example.com")], r.Code)
		}
		return out
	}
	if got, want := outcomes(""), "hard:hard-bounce soft:soft-bounce spam:spam unsub: manual:manual full:soft-bounce ok: "; got != want {
		t.Errorf("a receipt after Migrate: %s; want %s (the old unsub lets it through)", got, want)
	}
	if got, want := outcomes("news.shop.example.com"), "hard:hard-bounce soft:soft-bounce spam:spam unsub:unsub manual:manual full:soft-bounce ok: "; got != want {
		t.Errorf("a newsletter after Migrate: %s; want %s", got, want)
	}
	// The new key takes a list's entry beside the old one.
	if _, err := s.Add(ctx, Entry{AccountID: "shop", Address: "unsub@example.com", Scope: postroom.ScopeList, List: "news.shop.example.com"}); err != nil {
		t.Fatal(err)
	}
	page, _, err := s.List(ctx, Query{AccountID: "shop", Prefix: "unsub@example.com"})
	if err != nil || len(page) != 2 {
		t.Errorf("unsub@'s entries: %+v, %v; want two (lists, and news's)", page, err)
	}
}
