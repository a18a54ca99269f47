package events

import (
	"testing"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/sqlschema"
	"github.com/postroom/postroom/internal/testkit/pgtest"
	"github.com/postroom/postroom/sqldb/pgxdb"
)

// TestMigrateFromVersion1 upgrades a log at schema version 1 that holds
// a send and a complaint about it: after Migrate the database is at
// SQLSchemaVersion, the old rows read as they did with no list, and new
// events keep theirs beside them.
func TestMigrateFromVersion1(t *testing.T) {
	ctx := t.Context()
	pool := pgtest.NewPool(t)
	ms, err := sqlschema.Load(sqlSchema, "sql/*.sql", SQLSchemaVersion)
	if err != nil {
		t.Fatal(err)
	}
	if err := sqlschema.Migrate(ctx, pgxdb.New(pool), migrationLockKey, "postroom_events_schema", ms[:1], 1); err != nil {
		t.Fatal(err)
	}
	const old, fresh = "0000000000000000000000000000000a", "0000000000000000000000000000000b"
	at := time.Now().Add(-time.Hour).Truncate(time.Microsecond)
	for _, q := range []string{
		`INSERT INTO postroom_events (account_id, event, send_id, email, at) VALUES ('acct', 'send', '` + old + `', 'ann@example.net', $1)`,
		`INSERT INTO postroom_events (account_id, event, send_id, email, reason, at) VALUES ('acct', 'spam', '` + old + `', 'ann@example.net', 'complaint', $1)`,
	} {
		if _, err := pool.Exec(ctx, q, at); err != nil {
			t.Fatal(err)
		}
	}

	if err := Migrate(ctx, pgxdb.New(pool)); err != nil {
		t.Fatal(err)
	}
	var version int
	if err := pool.QueryRow(ctx, `SELECT max(version) FROM postroom_events_schema`).Scan(&version); err != nil || version != SQLSchemaVersion {
		t.Fatalf("after Migrate: version %d (%v), want %d", version, err, SQLSchemaVersion)
	}
	s, err := NewSQL(pgxdb.New(pool), SQLOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Record(ctx, []postroom.Event{
		{Type: postroom.EventSend, SendID: fresh, AccountID: "acct", Email: "bob@example.net", List: "news.shop.example.com"},
		{Type: postroom.EventSpam, SendID: fresh, AccountID: "acct", Email: "bob@example.net", Reason: "complaint", List: "news.shop.example.com"},
	}); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct{ id, email, list string }{
		{old, "ann@example.net", ""},
		{fresh, "bob@example.net", "news.shop.example.com"},
	} {
		snd, ok, err := s.Lookup(ctx, tc.id)
		if err != nil || !ok || snd.Email != tc.email || snd.List != tc.list {
			t.Errorf("Send(%s) = %+v, %v, %v; want %s of list %q", tc.id, snd, ok, err, tc.email, tc.list)
		}
	}
	later, err := s.After(ctx, []string{old, fresh})
	if err != nil {
		t.Fatal(err)
	}
	if e := later[old]; e.Type != postroom.EventSpam || e.List != "" || !e.At.Equal(at) {
		t.Errorf("After: the old complaint reads %+v, want spam with no list at %v", e, at)
	}
	if e := later[fresh]; e.Type != postroom.EventSpam || e.List != "news.shop.example.com" {
		t.Errorf("After: the new complaint reads %+v, want spam of news.shop.example.com", e)
	}
	evs, _, err := s.List(ctx, "acct", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	var lists []string
	for _, e := range evs {
		lists = append(lists, string(e.Type)+" "+e.Email+" "+e.List)
	}
	want := []string{"send ann@example.net ", "spam ann@example.net ", "send bob@example.net news.shop.example.com", "spam bob@example.net news.shop.example.com"}
	if len(lists) != len(want) {
		t.Fatalf("List = %q, want %q", lists, want)
	}
	for i := range want {
		if lists[i] != want[i] {
			t.Errorf("List[%d] = %q, want %q", i, lists[i], want[i])
		}
	}

	if err := Migrate(ctx, pgxdb.New(pool)); err != nil { // again: nothing to do
		t.Fatal(err)
	}
}
