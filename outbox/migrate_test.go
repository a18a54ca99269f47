package outbox

import (
	"encoding/json"
	"maps"
	"testing"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/sqlschema"
	"github.com/postroom/postroom/internal/testkit/pgtest"
	"github.com/postroom/postroom/sqldb"
	"github.com/postroom/postroom/sqldb/pgxdb"
	"github.com/postroom/postroom/transport"
)

// TestMigrateFromVersion2 upgrades a database at schema version 2 that
// holds a call's rows (one per recipient: sent, deferred, and reserved by
// a run that died): Migrate brings it to SchemaVersion, the rows become
// writes (sql/003_results_log.sql) that read as they did, and the next
// run of the job sends the deferred recipient and settles the reserved
// one as interrupted.
func TestMigrateFromVersion2(t *testing.T) {
	ctx := t.Context()
	pool := pgtest.NewPool(t)
	ms, err := migrations(sqldb.Postgres)
	if err != nil {
		t.Fatal(err)
	}
	if err := sqlschema.Migrate(ctx, pgxdb.New(pool), migrateLock, "postroom_outbox_schema", ms[:2], 2); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`INSERT INTO postroom_outbox_calls VALUES ('c', 'a', NULL, '\x00', 0, '{}', 4, now())`,
		`INSERT INTO postroom_outbox_chunks (call_id, first, count, recipients, epoch) VALUES ('c', 0, 4, '[]', 1)`,
		`INSERT INTO postroom_outbox_recipients (call_id, idx, email, status, send_id, epoch) VALUES ('c', 0, 'a@example.org', 'sent', 'id0', 1)`,
		`INSERT INTO postroom_outbox_recipients (call_id, idx, email, status, code, reason, epoch) VALUES ('c', 1, 'b@example.org', 'deferred', 'deferred', 'deferred: 451 later', 1)`,
		`INSERT INTO postroom_outbox_recipients (call_id, idx, email, status, epoch) VALUES ('c', 2, 'c@example.org', 'reserved', 1)`,
	} {
		if _, err := pool.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if err := Migrate(ctx, pgxdb.New(pool)); err != nil {
		t.Fatal(err)
	}
	var version int
	if err := pool.QueryRow(ctx, `SELECT max(version) FROM postroom_outbox_schema`).Scan(&version); err != nil {
		t.Fatal(err)
	}
	if version != SchemaVersion {
		t.Errorf("after Migrate: version %d, want %d", version, SchemaVersion)
	}
	states := func() string {
		t.Helper()
		var s string
		if err := pool.QueryRow(ctx, `SELECT string_agg(idx || ' ' || status || ' ' || send_id || reason, ', ' ORDER BY idx)
			FROM postroom_outbox_recipients WHERE call_id = 'c'`).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	if got, want := states(), "0 sent id0, 1 deferred deferred: 451 later, 2 reserved "; got != want {
		t.Errorf("after Migrate: %q, want %q", got, want)
	}
	l, err := takeLease(ctx, pgxdb.New(pool), SendArgs{CallID: "c", First: 0, Count: 4})
	if err != nil {
		t.Fatal(err)
	}
	todo, err := l.pending(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(todo) != 2 || todo[0] != 1 || todo[1] != 3 || l.last(1) != "deferred: 451 later" {
		t.Errorf("the next run sends %v (1's last attempt %q), want [1 3]", todo, l.last(1))
	}
	if got, want := states(), "0 sent id0, 1 deferred deferred: 451 later, 2 unknown "+interruptedReason; got != want {
		t.Errorf("after the next run's start: %q, want %q", got, want)
	}
	var compression string
	if err := pool.QueryRow(ctx, `SELECT attcompression::text FROM pg_attribute
		WHERE attrelid = 'postroom_outbox_chunks'::regclass AND attname = 'recipients'`).Scan(&compression); err == nil {
		t.Logf("chunks' recipients compression: %q (l: lz4)", compression)
	}
	if err := Migrate(ctx, pgxdb.New(pool)); err != nil { // again: nothing to do
		t.Fatal(err)
	}
}

// TestMigrateFromVersion3 upgrades a database at schema version 3 whose
// calls were stored without their list: Migrate reads each list from the
// call's body as Enqueue's callList would, a body without headers or that
// is not such JSON keeps none, and Migrate again changes nothing.
func TestMigrateFromVersion3(t *testing.T) {
	ctx := t.Context()
	pool := pgtest.NewPool(t)
	ms, err := migrations(sqldb.Postgres)
	if err != nil {
		t.Fatal(err)
	}
	if err := sqlschema.Migrate(ctx, pgxdb.New(pool), migrateLock, "postroom_outbox_schema", ms[:3], 3); err != nil {
		t.Fatal(err)
	}
	list := func(headers ...postroom.Header) []byte {
		b, err := json.Marshal(&postroom.Call{AccountID: "a", Message: postroom.Message{Subject: "s", Headers: headers}})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	bodies := map[string][]byte{
		"none":      list(),
		"others":    list(postroom.Header{Name: "X-Campaign", Value: "<x.y>"}),
		"ListID":    list(postroom.ListID("Shop news", "News.Shop.Example.COM")),
		"lower":     list(postroom.Header{Name: "X-A", Value: "<x.y>"}, postroom.Header{Name: "list-id", Value: ` "A <b>" <Deals.Example> `}),
		"quoted":    list(postroom.ListID("News, deals & more", "deals.shop.example.com")),
		"empty":     []byte(`{}`),
		"not json":  []byte(`{"message":{"headers":[{"name":"List-Id","value":"<a.b>"}` + "\xff"),
		"not array": []byte(`{"message":{"headers":{"List-Id":"<a.b>"}}}`),
	}
	want := map[string]string{}
	for id, body := range bodies {
		if _, err := pool.Exec(ctx, `INSERT INTO postroom_outbox_calls (id, account_id, request_hash, operation, body, recipients, started_at)
			VALUES ($1, 'a', '\x00', 0, $2, 1, now())`, id, body); err != nil {
			t.Fatal(err)
		}
		var c postroom.Call
		if json.Unmarshal(body, &c) == nil {
			want[id] = callList(c.Message.Headers)
		} else {
			want[id] = ""
		}
	}
	if want["ListID"] != "news.shop.example.com" || want["lower"] != "deals.example" {
		t.Fatalf("callList: %q", want)
	}
	if err := Migrate(ctx, pgxdb.New(pool)); err != nil {
		t.Fatal(err)
	}
	var version int
	if err := pool.QueryRow(ctx, `SELECT max(version) FROM postroom_outbox_schema`).Scan(&version); err != nil || version != SchemaVersion {
		t.Fatalf("after Migrate: version %d (%v), want %d", version, err, SchemaVersion)
	}
	m, err := postroom.New(transport.NewMemory(), postroom.Options{Auth: postroom.NoAuth{}})
	if err != nil {
		t.Fatal(err)
	}
	o, err := New(m, pgxdb.New(pool), Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := make(map[string]string)
	for id := range bodies {
		st, err := o.Status(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		got[id] = st.List
	}
	if !maps.Equal(got, want) {
		t.Errorf("after Migrate: lists %q, want %q", got, want)
	}
	if err := Migrate(ctx, pgxdb.New(pool)); err != nil { // again: nothing to do
		t.Fatal(err)
	}
}
