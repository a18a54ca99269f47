package httpapi

import (
	"net/http"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/testkit/pgtest"
	"github.com/postroom/postroom/sqldb/pgxdb"
	"github.com/postroom/postroom/suppression"
	"github.com/postroom/postroom/transport"
)

// TestRejectsAccountIDRefused: under NoAuth, which takes any account, an
// account_id that PostgreSQL's text cannot hold (a NUL), or that no
// account has (a control character, over 255 bytes), is 400
// validation_error naming account_id at each rejects endpoint, never a
// 500 from the store. (The calls.* endpoints: TestHTTPAccountIDRefused in
// package outbox, over a real outbox.)
func TestRejectsAccountIDRefused(t *testing.T) {
	pool, err := pgxpool.New(t.Context(), pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if err := suppression.Migrate(t.Context(), pgxdb.New(pool)); err != nil {
		t.Fatal(err)
	}
	list, err := suppression.NewSQL(pgxdb.New(pool), suppression.Options{})
	if err != nil {
		t.Fatal(err)
	}
	url, _ := startHandler(t, transport.NewMemory(), postroom.Options{Suppressions: list}, Options{Suppressions: list})
	for _, account := range []string{"a\x00b", "a\nb", "\x7f", strings.Repeat("a", 256)} {
		for _, path := range []string{RejectsAddPath, RejectsListPath, RejectsDeletePath} {
			postJSON(t, url+path, map[string]any{"key": "k", "account_id": account, "email": "ann@example.com"}).
				apiErr(t, http.StatusBadRequest, "validation_error", "account_id")
		}
	}
	// A good account is still served.
	var entries []map[string]any
	postJSON(t, url+RejectsListPath, map[string]any{"key": "k", "account_id": "acct"}).decode(t, http.StatusOK, &entries)
}

// TestSendAccountIDRefused: the send endpoints refuse such an account_id
// as the account endpoints do, before anything is sent.
func TestSendAccountIDRefused(t *testing.T) {
	mem := transport.NewMemory()
	url, _ := startMailer(t, mem, postroom.Options{})
	for _, account := range []string{"a\x00b", "a\tb"} {
		call := smallCall(1)
		call.AccountID = account
		r := post(t, t.Context(), url+SendPath, "application/json", marshal(t, call))
		if r.Status != http.StatusBadRequest || r.Error.Code != "validation_error" || r.Error.Field != "account_id" {
			t.Errorf("account_id %q: %d %s; want 400 validation_error on account_id", account, r.Status, r.Body)
		}
	}
	if mem.Len() != 0 {
		t.Errorf("%d messages sent; want none", mem.Len())
	}
}
