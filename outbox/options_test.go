package outbox_test

import (
	"errors"
	"testing"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/testkit/dbtest"
	"github.com/postroom/postroom/outbox"
)

// TestNewRefusesOptions: a negative number and MaxAttempts over its bound
// are *postroom.OptionsError naming outbox.New and the field.
func TestNewRefusesOptions(t *testing.T) {
	m, err := postroom.New(postroom.TransportFunc(nil), postroom.Options{Auth: postroom.NoAuth{}})
	if err != nil {
		t.Fatal(err)
	}
	db := dbtest.SQLite(t)
	for _, tt := range []struct {
		opts  outbox.Options
		field string
	}{
		{outbox.Options{JobSize: -1}, "Options.JobSize"},
		{outbox.Options{BatchSize: -1}, "Options.BatchSize"},
		{outbox.Options{Connections: -1}, "Options.Connections"},
		{outbox.Options{MaxAge: -1}, "Options.MaxAge"},
		{outbox.Options{MaxAttempts: 1 << 20}, "Options.MaxAttempts"},
	} {
		_, err := outbox.New(m, db, tt.opts)
		var oe *postroom.OptionsError
		if !errors.As(err, &oe) || oe.Op != "outbox.New" || oe.Field != tt.field {
			t.Errorf("New(%+v) = %v; want an OptionsError for %s", tt.opts, err, tt.field)
		}
	}
}
