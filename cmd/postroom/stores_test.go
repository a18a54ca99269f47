package main

import (
	"testing"

	"github.com/postroom/postroom/events"
	"github.com/postroom/postroom/sqldb"
	"github.com/postroom/postroom/templatestore"
)

// templateSQL is the template store of db, as the application makes it.
func templateSQL(t *testing.T, db sqldb.DB) *templatestore.SQL {
	return templatestore.NewSQL(db)
}

// eventsSQL is the event log of db, as the application makes it.
func eventsSQL(t *testing.T, db sqldb.DB) *events.SQL {
	t.Helper()
	s, err := events.NewSQL(db, events.SQLOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}
