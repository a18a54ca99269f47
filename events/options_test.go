package events_test

import (
	"errors"
	"testing"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/events"
	"github.com/postroom/postroom/internal/testkit/dbtest"
)

// TestOptionsRefused: a negative field is a *postroom.OptionsError naming
// the constructor and the field.
func TestOptionsRefused(t *testing.T) {
	check := func(err error, op, field string) {
		t.Helper()
		var oe *postroom.OptionsError
		if !errors.As(err, &oe) || oe.Op != op || oe.Field != field {
			t.Errorf("%s with a negative %s: %v; want an OptionsError naming both", op, field, err)
		}
	}
	_, err := events.NewMemory(events.MemoryOptions{MaxSends: -1})
	check(err, "events.NewMemory", "MemoryOptions.MaxSends")
	_, err = events.NewMemory(events.MemoryOptions{Retention: -time.Second})
	check(err, "events.NewMemory", "MemoryOptions.Retention")

	db := dbtest.SQLite(t)
	if err := events.Migrate(t.Context(), db); err != nil {
		t.Fatal(err)
	}
	for field, opts := range map[string]events.SQLOptions{
		"SQLOptions.Retention":  {Retention: -1},
		"SQLOptions.SendWindow": {SendWindow: -1},
		"SQLOptions.KeepBodies": {KeepBodies: -1},
	} {
		_, err := events.NewSQL(db, opts)
		check(err, "events.NewSQL", field)
	}
	_, err = events.NewMemory(events.MemoryOptions{MaxBodies: -1})
	check(err, "events.NewMemory", "MemoryOptions.MaxBodies")
	s, err := events.NewSQL(db, events.SQLOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for field, opts := range map[string]events.RecorderOptions{
		"RecorderOptions.FlushEvents":  {FlushEvents: -1},
		"RecorderOptions.FlushAfter":   {FlushAfter: -1},
		"RecorderOptions.FlushTimeout": {FlushTimeout: -1},
		"RecorderOptions.MaxBuffered":  {MaxBuffered: -1},
	} {
		_, err := s.NewRecorder(opts)
		check(err, "events.NewRecorder", field)
	}
}
