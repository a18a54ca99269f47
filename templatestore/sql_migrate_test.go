package templatestore

import (
	"bytes"
	"slices"
	"testing"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/sqlschema"
	"github.com/postroom/postroom/internal/testkit/pgtest"
	"github.com/postroom/postroom/sqldb/pgxdb"
	"github.com/postroom/postroom/transport"
)

// TestMigrateFromVersion1 migrates a database of schema version 1 holding
// templates, written by the SQL store of that version and by hand: each
// keeps its source as its draft and as published version 1, calls go on
// sending it, and it is then managed as any other template.
func TestMigrateFromVersion1(t *testing.T) {
	ctx, db := t.Context(), pgtest.NewPool(t)
	ms, err := sqlMigrations("sql/*.sql", SQLSchemaVersion)
	if err != nil {
		t.Fatal(err)
	}
	if err := sqlschema.Migrate(ctx, pgxdb.New(db), migrationLockKey, "postroom_templatestore_schema", ms[:1], 1); err != nil {
		t.Fatalf("migrating to version 1: %v", err)
	}
	// What version 1's Put wrote, and a row written by hand.
	if _, err := db.Exec(ctx, `INSERT INTO postroom_templates (account_id, id, source) VALUES
		('acme', 'welcome', 'Hello {{name}}, version 1'),
		('other', 'welcome', 'Other account')`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(ctx, `INSERT INTO postroom_templates (account_id, id, source, updated_at) VALUES ('acme', 'old', 'Old', '2024-05-01T10:00:00Z')`); err != nil {
		t.Fatal(err)
	}

	if err := Migrate(ctx, pgxdb.New(db)); err != nil {
		t.Fatalf("Migrate from version 1: %v", err)
	}
	s := &SQL{DB: pgxdb.New(db)}
	for _, tc := range []struct{ account, id, want string }{
		{"acme", "welcome", "Hello {{name}}, version 1"},
		{"other", "welcome", "Other account"},
		{"acme", "old", "Old"},
	} {
		if got, err := s.Template(ctx, tc.account, tc.id); err != nil || got != tc.want {
			t.Errorf("Template(%s, %s) after the migration = %q, %v; want %q", tc.account, tc.id, got, err, tc.want)
		}
		info, err := s.Info(ctx, tc.account, tc.id)
		if err != nil {
			t.Fatal(err)
		}
		if info.Draft != tc.want || len(info.Versions) != 1 || info.Versions[0].Version != 1 || info.Versions[0].Source != tc.want || info.Versions[0].From != 0 {
			t.Errorf("Info(%s, %s) after the migration: %+v", tc.account, tc.id, info)
		}
	}
	old, err := s.Info(ctx, "acme", "old")
	if err != nil {
		t.Fatal(err)
	}
	if old.Created.Year() != 2024 || old.Published.Published.Year() != 2024 {
		t.Errorf("old template's times: created %v, published %v; want its updated_at", old.Created, old.Published.Published)
	}

	sent := func() string {
		t.Helper()
		tr := transport.NewMemory()
		m, err := postroom.New(tr, postroom.Options{Auth: postroom.NoAuth{}, Templates: s})
		if err != nil {
			t.Fatal(err)
		}
		_, err = m.SendTemplate(ctx, &postroom.Call{AccountID: "acme",
			Message:    postroom.Message{FromEmail: "shop@example.com", Subject: "Hi", TextTemplateID: "welcome"},
			Recipients: []postroom.Recipient{{Email: "ann@example.org", Params: postroom.Params{"name": "Ann"}}}})
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range []string{"version 1", "version 2"} {
			if bytes.Contains(tr.Envelopes()[0].Data, []byte("Hello Ann, "+v)) {
				return v
			}
		}
		return "neither"
	}
	if got := sent(); got != "version 1" {
		t.Fatalf("sent %s after the migration", got)
	}
	if _, err := s.Update(ctx, "acme", "welcome", "Hello {{name}}, version 2", true); err != nil {
		t.Fatal(err)
	}
	if got := sent(); got != "version 2" {
		t.Errorf("sent %s after publishing version 2", got)
	}
	if _, err := s.PublishVersion(ctx, "acme", "welcome", 1); err != nil {
		t.Fatal(err)
	}
	if got := sent(); got != "version 1" {
		t.Errorf("sent %s after publishing version 1 again", got)
	}
	list, err := s.List(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, tpl := range list {
		ids = append(ids, tpl.ID)
	}
	if !slices.Equal(ids, []string{"old", "welcome"}) {
		t.Errorf("List(acme) = %v", ids)
	}
}
