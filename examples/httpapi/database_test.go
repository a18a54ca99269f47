package main

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/pgtest"
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
	db, err := openDatabase(t.Context(), pgtest.DSN(t))
	if err != nil {
		t.Fatalf("openDatabase: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	store := templatestore.NewSQL(db) // another instance's view of the table
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
		if err := db.QueryRowContext(t.Context(), `SELECT count(*) FROM postroom_templates`).Scan(&n); err != nil {
			t.Fatalf("the template table after openDatabase: %v", err)
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
