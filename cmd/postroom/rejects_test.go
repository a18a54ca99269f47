package main

import (
	"strings"
	"testing"

	"github.com/postroom/postroom/suppression"
)

func TestRejects(t *testing.T) {
	c, _ := migrated(t)
	c.ok(t, "rejects", "add", "-account", "shop", "-email", "Ann@Example.org", "-detail", "asked by phone")
	c.ok(t, "rejects", "add", "-account", "shop", "-email", "bob@example.org", "-reason", "spam", "-for", "1h")
	c.ok(t, "rejects", "add", "-account", "other", "-email", "cy@example.org")

	var list struct{ Entries []suppression.Entry }
	c.jsonOf(t, &list, "rejects", "list", "-account", "shop")
	if len(list.Entries) != 2 {
		t.Fatalf("list: %+v", list)
	}
	byAddr := map[string]suppression.Entry{}
	for _, e := range list.Entries {
		byAddr[e.Address] = e
	}
	if e := byAddr["ann@example.org"]; e.Reason != "manual" || e.Detail != "asked by phone" || !e.Expires.IsZero() {
		t.Errorf("ann: %+v", e)
	}
	if e := byAddr["bob@example.org"]; e.Reason != "spam" || e.Expires.IsZero() {
		t.Errorf("bob: %+v", e)
	}
	if out := c.ok(t, "rejects", "list", "-account", "shop", "-reason", "spam"); !strings.Contains(out, "bob@example.org  spam") || strings.Contains(out, "ann@") {
		t.Errorf("list -reason spam printed:\n%s", out)
	}

	c.ok(t, "rejects", "delete", "-account", "shop", "-email", "ann@example.org")
	if r := c.run(t, "rejects", "delete", "-account", "shop", "-email", "ann@example.org"); r.code != 1 || !strings.Contains(r.stderr, "not listed") {
		t.Errorf("second delete: %+v", r)
	}
	c.jsonOf(t, &list, "rejects", "list", "-account", "shop")
	if len(list.Entries) != 1 || list.Entries[0].Address != "bob@example.org" {
		t.Errorf("after delete: %+v", list)
	}
	if r := c.run(t, "rejects", "add", "-account", "shop"); r.code != 2 || !strings.Contains(r.stderr, "-email is required") {
		t.Errorf("add without -email: %+v", r)
	}
}
