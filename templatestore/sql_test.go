package templatestore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/testkit/dbtest"
	"github.com/postroom/postroom/internal/testkit/pgtest"
	"github.com/postroom/postroom/sqldb"
	"github.com/postroom/postroom/sqldb/pgxdb"
	"github.com/postroom/postroom/templatestore"
	"github.com/postroom/postroom/transport"
)

var _ postroom.TemplateStore = (*templatestore.SQL)(nil)

// engines runs f on a fresh, empty database of each engine.
func engines(t *testing.T, f func(t *testing.T, db sqldb.DB)) {
	for _, e := range dbtest.Engines() {
		t.Run(e.Name, func(t *testing.T) { f(t, e.Open(t)) })
	}
}

// sqlStore returns an SQL store on db, migrated, holding the same
// templates as stores: acme/welcome, acme/receipt.txt, acme/secret and
// other/welcome.
func sqlStore(t testing.TB, db sqldb.DB) *templatestore.SQL {
	t.Helper()
	if err := templatestore.Migrate(t.Context(), db); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	store := templatestore.NewSQL(db)
	for _, tpl := range []struct{ account, id, source string }{
		{"acme", "welcome", "Hello {{name}} from acme"},
		{"acme", "receipt.txt", "Receipt {{number}}"},
		{"acme", "secret", "acme secret"},
		{"other", "welcome", "Hello {{name}} from other"},
	} {
		if err := store.Put(t.Context(), tpl.account, tpl.id, tpl.source); err != nil {
			t.Fatalf("Put(%q, %q): %v", tpl.account, tpl.id, err)
		}
	}
	return store
}

func TestSQLTemplate(t *testing.T) {
	engines(t, func(t *testing.T, db sqldb.DB) {
		store := sqlStore(t, db)
		tests := []struct {
			name, account, id string
			want              string
			wantErr           error
		}{
			{name: "found", account: "acme", id: "welcome", want: "Hello {{name}} from acme"},
			{name: "dotted_id", account: "acme", id: "receipt.txt", want: "Receipt {{number}}"},
			{name: "same_id_other_account", account: "other", id: "welcome", want: "Hello {{name}} from other"},
			{name: "missing_template", account: "acme", id: "nope", wantErr: postroom.ErrTemplateNotFound},
			{name: "missing_account", account: "nobody", id: "welcome", wantErr: postroom.ErrTemplateNotFound},
			{name: "other_accounts_template", account: "other", id: "receipt.txt", wantErr: postroom.ErrTemplateNotFound},
			{name: "other_accounts_secret", account: "other", id: "secret", wantErr: postroom.ErrTemplateNotFound},
			{name: "case_differs", account: "ACME", id: "welcome", wantErr: postroom.ErrTemplateNotFound},
			{name: "like_pattern", account: "acme", id: "welcom_", wantErr: postroom.ErrTemplateNotFound},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				got, err := store.Template(t.Context(), tt.account, tt.id)
				if tt.wantErr != nil {
					if !errors.Is(err, tt.wantErr) || got != "" {
						t.Fatalf("Template(%q, %q) = %q, %v; want \"\", error wrapping %v", tt.account, tt.id, got, err, tt.wantErr)
					}
					return
				}
				if err != nil || got != tt.want {
					t.Fatalf("Template(%q, %q) = %q, %v; want %q, nil", tt.account, tt.id, got, err, tt.want)
				}
			})
		}
		for _, tt := range badIDs {
			t.Run("invalid_"+tt.name, func(t *testing.T) {
				for _, ids := range [][2]string{{"acme", tt.id}, {tt.id, "welcome"}} {
					got, err := store.Template(t.Context(), ids[0], ids[1])
					if !errors.Is(err, templatestore.ErrInvalidID) || !errors.Is(err, postroom.ErrTemplateNotFound) {
						t.Errorf("Template(%q, %q) = %q, %v; want ErrInvalidID wrapping ErrTemplateNotFound", ids[0], ids[1], got, err)
					}
				}
			})
		}
	})
}

func TestSQLPutReplaceDelete(t *testing.T) {
	engines(t, func(t *testing.T, db sqldb.DB) {
		store := sqlStore(t, db)
		ctx := t.Context()
		steps := []storeStep{
			{name: "before_put", id: "a", missing: true},
			{name: "put", do: func() error { return store.Put(ctx, "acme", "a", "one") }, id: "a", want: "one"},
			{name: "replace", do: func() error { return store.Put(ctx, "acme", "a", "two") }, id: "a", want: "two"},
			{name: "put_other_id", do: func() error { return store.Put(ctx, "acme", "b", "bee") }, id: "a", want: "two"},
			{name: "delete", do: func() error { return store.Delete(ctx, "acme", "a") }, id: "a", missing: true},
			{name: "other_id_kept", id: "b", want: "bee"},
			{name: "delete_missing", do: func() error { return store.Delete(ctx, "acme", "zzz") }, id: "b", want: "bee"},
			{name: "delete_other_account", do: func() error { return store.Delete(ctx, "other", "b") }, id: "b", want: "bee"},
			{name: "empty_source", do: func() error { return store.Put(ctx, "acme", "empty", "") }, id: "empty", want: ""},
			{name: "unicode_source", do: func() error { return store.Put(ctx, "acme", "u", "Grüße, {{name}} ✉") }, id: "u", want: "Grüße, {{name}} ✉"},
		}
		runStoreSteps(t, store, steps)
		// Deleting acme's welcome left other's alone.
		if err := store.Delete(ctx, "acme", "welcome"); err != nil {
			t.Fatal(err)
		}
		if got, err := store.Template(ctx, "other", "welcome"); err != nil || got != "Hello {{name}} from other" {
			t.Errorf("other/welcome after deleting acme/welcome = %q, %v", got, err)
		}
	})
}

func TestSQLPutRefused(t *testing.T) {
	engines(t, func(t *testing.T, db sqldb.DB) {
		store := sqlStore(t, db)
		ctx := t.Context()
		for _, tt := range badIDs {
			t.Run("id_"+tt.name, func(t *testing.T) {
				if err := store.Put(ctx, "acme", tt.id, "x"); !errors.Is(err, templatestore.ErrInvalidID) {
					t.Errorf("Put(acme, %q) = %v; want ErrInvalidID", tt.id, err)
				}
				if err := store.Put(ctx, tt.id, "welcome", "x"); !errors.Is(err, templatestore.ErrInvalidID) {
					t.Errorf("Put(%q, welcome) = %v; want ErrInvalidID", tt.id, err)
				}
				if err := store.Delete(ctx, "acme", tt.id); !errors.Is(err, templatestore.ErrInvalidID) {
					t.Errorf("Delete(acme, %q) = %v; want ErrInvalidID", tt.id, err)
				}
			})
		}
		for _, tt := range []struct{ name, source string }{
			{"nul", "a\x00b"},
			{"invalid_utf8", "caf\xe9"},
		} {
			t.Run("source_"+tt.name, func(t *testing.T) {
				if err := store.Put(ctx, "acme", "welcome", tt.source); !errors.Is(err, templatestore.ErrInvalidSource) {
					t.Fatalf("Put(acme, welcome, %q) = %v; want ErrInvalidSource", tt.source, err)
				}
				if got, err := store.Template(ctx, "acme", "welcome"); err != nil || got != "Hello {{name}} from acme" {
					t.Errorf("after a refused Put, Template = %q, %v; want the old source", got, err)
				}
			})
		}
	})
}

// TestSQLSchemaChecksIDs writes rows by hand: the table refuses ids the
// package would refuse, so none can be stored around Put.
func TestSQLSchemaChecksIDs(t *testing.T) {
	engines(t, func(t *testing.T, db sqldb.DB) {
		sqlStore(t, db)
		for _, tt := range badIDs {
			t.Run(tt.name, func(t *testing.T) {
				if tt.name == "nul" && db.Engine() == sqldb.Postgres {
					t.Skip("PostgreSQL's text cannot hold NUL at all")
				}
				for _, ids := range [][2]string{{"acme", tt.id}, {tt.id, "welcome2"}} {
					_, err := db.Exec(t.Context(),
						`INSERT INTO postroom_templates (account_id, id, draft) VALUES ($1, $2, 'x')`, ids[0], ids[1])
					if err == nil {
						t.Errorf("the table accepted account %q, id %q", ids[0], ids[1])
					}
				}
			})
		}
	})
}

func TestSQLCanceled(t *testing.T) {
	engines(t, func(t *testing.T, db sqldb.DB) {
		store := sqlStore(t, db)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if got, err := store.Template(ctx, "acme", "welcome"); !errors.Is(err, context.Canceled) {
			t.Errorf("Template = %q, %v; want context.Canceled", got, err)
		}
		if err := store.Put(ctx, "acme", "welcome", "x"); !errors.Is(err, context.Canceled) {
			t.Errorf("Put = %v; want context.Canceled", err)
		}
		if err := store.Delete(ctx, "acme", "welcome"); !errors.Is(err, context.Canceled) {
			t.Errorf("Delete = %v; want context.Canceled", err)
		}
		if err := templatestore.Migrate(ctx, db); !errors.Is(err, context.Canceled) {
			t.Errorf("Migrate = %v; want context.Canceled", err)
		}
	})
}

// TestSQLCanceledWhileWaiting cancels a lookup blocked in the database, on
// the versions table another transaction holds locked: ctx reaches the
// query.
// PostgreSQL's only: SQLite's one connection makes the others wait in Go
// (sqlitedb), not in the database.
func TestSQLCanceledWhileWaiting(t *testing.T) {
	db := pgtest.NewPool(t)
	store := sqlStore(t, pgxdb.New(db))
	tx, err := db.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.WithoutCancel(t.Context()))
	if _, err := tx.Exec(t.Context(), `LOCK TABLE postroom_template_versions IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := store.Template(ctx, "acme", "welcome")
		done <- err
	}()
	// PostgreSQL says when a session waits for a lock only through
	// pg_locks, so the test asks until it does.
	for waiting := false; !waiting; {
		err := tx.QueryRow(t.Context(),
			`SELECT count(*) > 0 FROM pg_locks WHERE NOT granted AND relation = 'postroom_template_versions'::regclass`).Scan(&waiting)
		if err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-done:
			t.Fatalf("Template returned %v while the table was locked", err)
		case <-time.After(5 * time.Millisecond):
		}
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Template after cancel = %v; want context.Canceled", err)
	}
}

func TestSQLWithoutMigration(t *testing.T) {
	engines(t, func(t *testing.T, db sqldb.DB) {
		store := templatestore.NewSQL(db)
		_, err := store.Template(t.Context(), "acme", "welcome")
		if err == nil || errors.Is(err, postroom.ErrTemplateNotFound) {
			t.Fatalf("Template without the table = %v; want a database error, not ErrTemplateNotFound", err)
		}
	})
}

// schemaVersions returns the versions Migrate recorded in db.
func schemaVersions(t *testing.T, db sqldb.DB) []int {
	t.Helper()
	rows, err := db.Query(t.Context(), `SELECT version FROM postroom_templatestore_schema ORDER BY version`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var vs []int
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		vs = append(vs, v)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return vs
}

func TestMigrate(t *testing.T) {
	for _, e := range dbtest.Engines() {
		version := templatestore.SQLSchemaVersion
		if e.Name == "sqlite" {
			version = templatestore.SQLiteSchemaVersion
		}
		want := make([]int, version)
		for i := range want {
			want[i] = i + 1
		}
		t.Run(e.Name+"/again_keeps_data", func(t *testing.T) {
			db := e.Open(t)
			store := sqlStore(t, db)
			for range 2 {
				if err := templatestore.Migrate(t.Context(), db); err != nil {
					t.Fatalf("Migrate on a migrated database: %v", err)
				}
			}
			if got := schemaVersions(t, db); !slices.Equal(got, want) {
				t.Errorf("versions recorded %v; want %v", got, want)
			}
			if got, err := store.Template(t.Context(), "acme", "welcome"); err != nil || got != "Hello {{name}} from acme" {
				t.Errorf("Template after migrating again = %q, %v", got, err)
			}
		})
		t.Run(e.Name+"/instances_at_once", func(t *testing.T) {
			db := e.Open(t)
			const instances = 4
			errs := make([]error, instances)
			var wg sync.WaitGroup
			for i := range instances {
				wg.Go(func() { errs[i] = templatestore.Migrate(t.Context(), db) })
			}
			wg.Wait()
			for i, err := range errs {
				if err != nil {
					t.Errorf("instance %d: Migrate: %v", i, err)
				}
			}
			if got := schemaVersions(t, db); !slices.Equal(got, want) {
				t.Errorf("versions recorded %v; want %v", got, want)
			}
		})
		t.Run(e.Name+"/newer_database", func(t *testing.T) {
			db := e.Open(t)
			sqlStore(t, db)
			newer := version + 1
			if _, err := db.Exec(t.Context(), `INSERT INTO postroom_templatestore_schema (version) VALUES ($1)`, newer); err != nil {
				t.Fatal(err)
			}
			if err := templatestore.Migrate(t.Context(), db); err == nil {
				t.Fatalf("Migrate on a schema of version %d: no error", newer)
			}
			if got := schemaVersions(t, db); !slices.Equal(got, append(want, newer)) {
				t.Errorf("versions recorded %v; want %v, untouched", got, append(want, newer))
			}
		})
	}
}

// sendWelcome sends acme's text template "welcome" to one recipient with m
// and returns the message handed to mem.
func sendWelcome(t *testing.T, m *postroom.Mailer, mem *transport.Memory) ([]byte, error) {
	t.Helper()
	mem.Reset()
	_, err := m.SendTemplate(t.Context(), &postroom.Call{
		AccountID: "acme",
		Message: postroom.Message{
			FromEmail:      "news@example.com",
			Subject:        "Welcome",
			TextTemplateID: "welcome",
		},
		Recipients: []postroom.Recipient{{Email: "ann@example.com", Params: map[string]any{"name": "Ann"}}},
	})
	if err != nil {
		return nil, err
	}
	envs := mem.Envelopes()
	if len(envs) != 1 {
		t.Fatalf("%d messages sent; want 1", len(envs))
	}
	return envs[0].Data, nil
}

// TestSQLUpdateSeenByNextCall changes a template between SendTemplate calls
// of a real Mailer: each call renders what the table holds at that moment.
func TestSQLUpdateSeenByNextCall(t *testing.T) {
	engines(t, func(t *testing.T, db sqldb.DB) {
		store := sqlStore(t, db)
		mem := transport.NewMemory()
		m, err := postroom.New(mem, postroom.Options{Auth: postroom.NoAuth{}, Templates: store})
		if err != nil {
			t.Fatal(err)
		}
		for _, version := range []string{"one", "two", "three"} {
			if err := store.Put(t.Context(), "acme", "welcome", "Version "+version+" for {{name}}."); err != nil {
				t.Fatal(err)
			}
			data, err := sendWelcome(t, m, mem)
			if err != nil {
				t.Fatalf("version %s: SendTemplate: %v", version, err)
			}
			if want := "Version " + version + " for Ann."; !bytes.Contains(data, []byte(want)) {
				t.Fatalf("version %s: message does not hold %q:\n%s", version, want, data)
			}
		}
		if err := store.Delete(t.Context(), "acme", "welcome"); err != nil {
			t.Fatal(err)
		}
		if _, err := sendWelcome(t, m, mem); !errors.Is(err, postroom.ErrTemplateNotFound) {
			t.Fatalf("SendTemplate after Delete = %v; want ErrTemplateNotFound", err)
		}
	})
}

// TestSQLConcurrent runs writers, readers and a Mailer's calls on one store
// at once; with -race it checks the store shares nothing unguarded, and
// every read sees a whole value of its own account.
func TestSQLConcurrent(t *testing.T) {
	engines(t, func(t *testing.T, db sqldb.DB) {
		store := sqlStore(t, db)
		mem := transport.NewMemory()
		m, err := postroom.New(mem, postroom.Options{Auth: postroom.NoAuth{}, Templates: store})
		if err != nil {
			t.Fatal(err)
		}
		const accounts, rounds = 3, 30
		ctx := t.Context()
		var wg sync.WaitGroup
		errs := make(chan error, 3*accounts)
		for a := range accounts {
			account := fmt.Sprintf("acct-%d", a)
			wg.Go(func() {
				for i := range rounds {
					id := fmt.Sprintf("t%d", i%3)
					if err := store.Put(ctx, account, id, account+"/"+id); err != nil {
						errs <- err
						return
					}
					if i%5 == 0 {
						if err := store.Delete(ctx, account, id); err != nil {
							errs <- err
							return
						}
					}
				}
			})
			wg.Go(func() {
				for i := range rounds {
					id := fmt.Sprintf("t%d", i%3)
					got, err := store.Template(ctx, account, id)
					switch {
					case errors.Is(err, postroom.ErrTemplateNotFound):
					case err != nil:
						errs <- err
						return
					case got != account+"/"+id:
						errs <- fmt.Errorf("Template(%q, %q) = %q, from another account or torn", account, id, got)
						return
					}
				}
			})
			wg.Go(func() {
				for i := range rounds {
					id := fmt.Sprintf("t%d", i%3)
					results, err := m.SendTemplate(ctx, &postroom.Call{
						AccountID:  account,
						Message:    postroom.Message{FromEmail: "news@example.com", Subject: "s", TextTemplateID: id},
						Recipients: []postroom.Recipient{{Email: fmt.Sprintf("r%d@example.com", i)}},
					})
					switch {
					case errors.Is(err, postroom.ErrTemplateNotFound):
					case err != nil:
						errs <- err
						return
					case results[0].Status != postroom.StatusSent:
						errs <- fmt.Errorf("SendTemplate(%q, %q): status %s", account, id, results[0].Status)
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		// Every message holds its own account's text.
		for _, env := range mem.Envelopes() {
			n := 0
			for a := range accounts {
				if bytes.Contains(env.Data, fmt.Appendf(nil, "acct-%d/t", a)) {
					n++
				}
			}
			if n != 1 {
				t.Errorf("message %s holds the text of %d accounts; want 1", env.SendID, n)
			}
		}
	})
}
