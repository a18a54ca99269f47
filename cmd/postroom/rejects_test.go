package main

import (
	"strings"
	"testing"

	"github.com/postroom/postroom/suppression"
)

func TestRejects(t *testing.T) { onEngines(t, testRejects) }

func testRejects(t *testing.T, e engine) {
	c := migratedOn(t, e)
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

// TestRejectsScopes adds, lists and deletes entries of each scope: the
// listing shows the scope and list columns, -scope and -list select, and
// delete with a scope takes that entry alone.
func TestRejectsScopes(t *testing.T) { onEngines(t, testRejectsScopes) }

func testRejectsScopes(t *testing.T, e engine) {
	c := migratedOn(t, e)
	c.ok(t, "rejects", "add", "-account", "shop", "-email", "ann@example.org", "-scope", "list", "-list", "News.Shop.Example.com", "-reason", "unsub")
	c.ok(t, "rejects", "add", "-account", "shop", "-email", "ann@example.org", "-scope", "lists", "-reason", "spam")
	if out := c.ok(t, "rejects", "add", "-account", "shop", "-email", "ann@example.org"); !strings.Contains(out, "(manual, all mail)") {
		t.Errorf("add without -scope printed %q; want all mail", out)
	}
	out := c.ok(t, "rejects", "list", "-account", "shop")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	want := []string{
		"ann@example.org  manual  all  -  listed ",
		"ann@example.org  unsub  list  news.shop.example.com  listed ",
		"ann@example.org  spam  lists  -  listed ",
	}
	if len(lines) != len(want) {
		t.Fatalf("list printed:\n%s\nwant %d lines", out, len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d: %q; want it to start with %q", i, lines[i], w)
		}
	}
	var list struct{ Entries []suppression.Entry }
	c.jsonOf(t, &list, "rejects", "list", "-account", "shop", "-list", "news.shop.example.com")
	if len(list.Entries) != 1 || list.Entries[0].Scope != "list" || list.Entries[0].List != "news.shop.example.com" {
		t.Errorf("list -list: %+v", list)
	}
	c.jsonOf(t, &list, "rejects", "list", "-account", "shop", "-scope", "lists")
	if len(list.Entries) != 1 || list.Entries[0].Reason != "spam" {
		t.Errorf("list -scope lists: %+v", list)
	}

	if out := c.ok(t, "rejects", "delete", "-account", "shop", "-email", "ann@example.org", "-scope", "list", "-list", "news.shop.example.com"); !strings.Contains(out, "the entry of list news.shop.example.com") {
		t.Errorf("delete -scope list printed %q", out)
	}
	if r := c.run(t, "rejects", "delete", "-account", "shop", "-email", "ann@example.org", "-scope", "list", "-list", "news.shop.example.com"); r.code != 1 || !strings.Contains(r.stderr, "not listed") {
		t.Errorf("second delete of the list's entry: %+v", r)
	}
	c.jsonOf(t, &list, "rejects", "list", "-account", "shop")
	if len(list.Entries) != 2 {
		t.Errorf("after deleting the list's entry: %+v; want the two others", list)
	}
	c.ok(t, "rejects", "delete", "-account", "shop", "-email", "ann@example.org")
	c.jsonOf(t, &list, "rejects", "list", "-account", "shop")
	if len(list.Entries) != 0 {
		t.Errorf("after delete without -scope: %+v; want none", list)
	}

	for _, tt := range []struct {
		args  []string
		field string
	}{
		{[]string{"add", "-scope", "everything"}, "scope"},
		{[]string{"add", "-scope", "list"}, "list"},
		{[]string{"add", "-scope", "list", "-list", "news"}, "list"},
		{[]string{"delete", "-list", "news.shop.example.com"}, "list"},
		{[]string{"list", "-scope", "everything"}, "scope"},
	} {
		args := append(append([]string{"rejects"}, tt.args...), "-account", "shop", "-email", "ann@example.org")
		if tt.args[0] == "list" {
			args = args[:len(args)-2]
		}
		if r := c.run(t, args...); r.code != 1 || !strings.Contains(r.stderr, "invalid "+tt.field+":") {
			t.Errorf("%v: %+v; want exit 1 naming %s", args, r, tt.field)
		}
	}
}
