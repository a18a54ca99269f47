package main

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/testkit/pgtest"
	"github.com/postroom/postroom/sqldb/pgxdb"
	"github.com/postroom/postroom/templatestore"
)

func TestParseFlagsDatabase(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		env  string
		want string // DatabaseURL; "-" refused
	}{
		{"flag", []string{"-no-auth", "-database-url", "postgres://app@db/app"}, "", "postgres://app@db/app"},
		{"env", []string{"-no-auth"}, "postgres://env@db/app", "postgres://env@db/app"},
		{"flag over env", []string{"-no-auth", "-database-url", "postgres://flag@db/app"}, "postgres://env@db/app", "postgres://flag@db/app"},
		{"none", []string{"-no-auth"}, "", ""},
		{"with templates", []string{"-no-auth", "-templates", "tpl", "-database-url", "postgres://app@db/app"}, "", "-"},
		{"templates and env", []string{"-no-auth", "-templates", "tpl"}, "postgres://env@db/app", "-"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			getenv := func(k string) string {
				if k == databaseEnv {
					return tc.env
				}
				return ""
			}
			cfg, err := parseFlags(tc.args, getenv, io.Discard)
			switch {
			case tc.want == "-" && err == nil:
				t.Errorf("parseFlags accepted %q with %s=%q", tc.args, databaseEnv, tc.env)
			case tc.want != "-" && err != nil:
				t.Errorf("parseFlags: %v", err)
			case tc.want != "-" && cfg.DatabaseURL != tc.want:
				t.Errorf("DatabaseURL %q; want %q", cfg.DatabaseURL, tc.want)
			}
		})
	}
}

// TestSendTemplateSQL serves message.send_template from templates in
// PostgreSQL, as run does with -database-url: the tables are created at
// start, a template changed in the database is used by the next call, and
// accounts stay apart.
func TestSendTemplateSQL(t *testing.T) {
	db, err := openDatabase(t.Context(), migrated.DSN(t))
	if err != nil {
		t.Fatalf("openDatabase: %v", err)
	}
	t.Cleanup(db.Close)
	store := templatestore.NewSQL(pgxdb.New(db)) // writes as another instance would
	if err := store.Put(t.Context(), "other", "welcome", "Not for acct."); err != nil {
		t.Fatal(err)
	}

	outbox := t.TempDir()
	api, _ := startConfig(t, config{EMLDir: outbox, NoAuth: true, DB: db})
	sendTemplate := func(t *testing.T) *response {
		t.Helper()
		c := smallCall(1)
		c.Message.Text = ""
		c.Message.TextTemplateID = "welcome"
		return post(t, t.Context(), api+"/api/1.0/message.send_template", "application/json", marshal(t, c))
	}

	t.Run("missing", func(t *testing.T) {
		r := sendTemplate(t)
		if r.Status != http.StatusBadRequest || r.Error.Code != "unknown_template" {
			t.Fatalf("got %d %s; want 400 unknown_template (acct has no welcome, other's is not acct's)", r.Status, r.Body)
		}
	})
	for _, version := range []string{"first", "second"} {
		t.Run(version, func(t *testing.T) {
			if err := store.Put(t.Context(), "acct", "welcome", "The "+version+" welcome, {{name}}."); err != nil {
				t.Fatal(err)
			}
			r := sendTemplate(t)
			if r.Status != http.StatusOK || len(r.Results) != 1 || r.Results[0].Status != postroom.StatusSent {
				t.Fatalf("got %d %s; want 200 with the recipient sent", r.Status, r.Body)
			}
			data, err := os.ReadFile(filepath.Join(outbox, r.Results[0].SendID+".eml"))
			if err != nil {
				t.Fatal(err)
			}
			if want := "The " + version + " welcome, User 0."; !bytes.Contains(data, []byte(want)) {
				t.Errorf("message does not hold %q:\n%s", want, data)
			}
		})
	}
}

func TestOpenDatabase(t *testing.T) {
	t.Run("empty", func(t *testing.T) {
		db, err := openDatabase(t.Context(), "")
		if db != nil || err != nil {
			t.Fatalf("openDatabase(\"\") = %v, %v; want nil, nil", db, err)
		}
	})
	t.Run("migrates", func(t *testing.T) {
		db, err := openDatabase(t.Context(), pgtest.DSN(t))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		var n int
		for _, table := range []string{"postroom_templates", "postroom_outbox_calls", "river_job"} {
			if err := db.QueryRow(t.Context(), `SELECT count(*) FROM `+table).Scan(&n); err != nil {
				t.Fatalf("the table %s after openDatabase: %v", table, err)
			}
		}
	})
	t.Run("unreachable", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close() // nothing listens there now
		db, err := openDatabase(t.Context(), "postgres://app@"+addr+"/app?connect_timeout=5")
		if err == nil {
			db.Close()
			t.Fatal("openDatabase of a closed port: no error")
		}
	})
}

// TestOnePool: with a database, every part of the server that keeps
// state there (stored templates, idempotency records, the outbox and its
// River client) works on the one pool openDatabase opened. After a
// message.send_template call, an idempotent call and a call sent later,
// every client connection to the database carries the pool's
// application_name, and there are exactly as many as the pool holds plus
// one, River's LISTEN connection, which River takes out of that same pool
// (pgxpool.Conn.Hijack) for good: a second pool, even one opened the same
// way, would hold connections of its own.
func TestOnePool(t *testing.T) {
	db, err := openDatabase(t.Context(), migrated.DSN(t))
	if err != nil {
		t.Fatalf("openDatabase: %v", err)
	}
	t.Cleanup(db.Close)
	if err := templatestore.NewSQL(pgxdb.New(db)).Put(t.Context(), "acct", "welcome", "Welcome, {{name}}."); err != nil {
		t.Fatal(err)
	}
	api, _ := startConfig(t, config{EMLDir: t.TempDir(), NoAuth: true, DB: db})

	c := smallCall(2)
	c.Message.Text, c.Message.TextTemplateID = "", "welcome"
	if r := post(t, t.Context(), api+"/api/1.0/message.send_template", "application/json", marshal(t, c)); r.Status != http.StatusOK {
		t.Fatalf("message.send_template: %d %s", r.Status, r.Body)
	}
	if r := mustPostKeyed(t, api+"/api/1.0/message.send", marshal(t, smallCall(2)), "one-pool"); r.Status != http.StatusOK {
		t.Fatalf("idempotent call: %d %s", r.Status, r.Body)
	}
	_, loc := postAsync(t, api+"/api/1.0/message.send", marshal(t, smallCall(2)))
	for st := (postroom.CallStatus{}); st.State != postroom.CallDone; time.Sleep(20 * time.Millisecond) {
		if code := getJSON(t, api+loc, &st); code != http.StatusOK {
			t.Fatalf("GET %s: %d", loc, code)
		}
	}

	// The pool's count and the server's can differ for an instant while
	// a connection is made or dropped: ask again until they agree.
	var names map[string]int
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		rows, err := db.Query(t.Context(), `SELECT coalesce(application_name, ''), count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND backend_type = 'client backend' GROUP BY 1`)
		if err != nil {
			t.Fatal(err)
		}
		names = map[string]int{}
		for rows.Next() {
			var name string
			var n int
			if err := rows.Scan(&name, &n); err != nil {
				t.Fatal(err)
			}
			names[name] = n
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		pooled := int(db.Stat().TotalConns())
		if len(names) == 1 && names[applicationName] == pooled+1 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("connections by application_name %v, the pool holds %d; want them all the pool's (%s): %d, and River's listener", names, pooled, applicationName, pooled)
		}
	}
}
