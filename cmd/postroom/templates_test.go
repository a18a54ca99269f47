package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/postroom/postroom/sqldb/pgxdb"
	"github.com/postroom/postroom/templatestore"
)

// writeFile writes data into a file of the test's folder and returns its
// path.
func writeFile(t *testing.T, name, data string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestTemplates(t *testing.T) {
	c, pool := migrated(t)
	v1 := writeFile(t, "v1.html", "<p>Hello {{name}}, v1</p>\n")
	v2 := writeFile(t, "v2.html", "<p>Hello {{name}}, v2</p>\n")
	bad := writeFile(t, "bad.html", "<p>Hello</p>\n<ul>\n  {{#each items}}<li>{{this}}</li>\n</ul>\n")
	store := templatestore.NewSQL(pgxdb.New(pool))
	live := func(want string) {
		t.Helper()
		got, err := store.Template(t.Context(), "shop", "welcome")
		if err != nil || got != want {
			t.Fatalf("live source %q, %v; want %q", got, err, want)
		}
	}

	out := c.ok(t, "templates", "add", "-account", "shop", "-name", "welcome", "-file", v1, "-publish")
	if !strings.Contains(out, "added welcome") || !strings.Contains(out, "live version 1") {
		t.Errorf("add printed %q", out)
	}
	live("<p>Hello {{name}}, v1</p>\n")

	out = c.ok(t, "templates", "update", "-account", "shop", "-name", "welcome", "-file", v2)
	if !strings.Contains(out, "live version 1") || !strings.Contains(out, "draft not published") {
		t.Errorf("update printed %q", out)
	}
	live("<p>Hello {{name}}, v1</p>\n")
	c.ok(t, "templates", "publish", "-account", "shop", "-name", "welcome")
	live("<p>Hello {{name}}, v2</p>\n")
	out = c.ok(t, "templates", "publish", "-account", "shop", "-name", "welcome", "-version", "1")
	if !strings.Contains(out, "live version 3") || !strings.Contains(out, "(version 1 again)") {
		t.Errorf("publish -version 1 printed %q", out)
	}
	live("<p>Hello {{name}}, v1</p>\n")

	// A template that does not compile: refused at its line and column,
	// nothing saved.
	r := c.run(t, "templates", "update", "-account", "shop", "-name", "welcome", "-file", bad, "-publish")
	if r.code != 1 || !strings.Contains(r.stderr, bad+":3:3: ") || !strings.Contains(r.stderr, "nothing saved") {
		t.Errorf("update with a bad template: %+v", r)
	}
	live("<p>Hello {{name}}, v1</p>\n")
	// -no-check saves it all the same (a template calling the
	// application's own helpers), as a draft here.
	c.ok(t, "templates", "add", "-account", "shop", "-name", "raw", "-file", bad, "-no-check")

	// -keep-versions bounds the versions kept.
	c.ok(t, "templates", "add", "-account", "shop", "-name", "kept", "-file", v1, "-publish")
	c.ok(t, "templates", "update", "-account", "shop", "-name", "kept", "-file", v2, "-publish")
	c.ok(t, "templates", "publish", "-account", "shop", "-name", "kept", "-version", "1", "-keep-versions", "2")
	var kept templatestore.Template
	c.jsonOf(t, &kept, "templates", "delete", "-account", "shop", "-name", "kept")
	if len(kept.Versions) != 2 || kept.Versions[1].Version != 2 {
		t.Errorf("-keep-versions 2 kept %+v", kept.Versions)
	}

	var info templatestore.Template
	c.jsonOf(t, &info, "templates", "info", "-account", "shop", "-name", "welcome")
	var versions []int
	for _, v := range info.Versions {
		versions = append(versions, v.Version)
	}
	if info.Draft != "<p>Hello {{name}}, v2</p>\n" || !slices.Equal(versions, []int{3, 2, 1}) {
		t.Errorf("info: %+v", info)
	}

	params := writeFile(t, "params.json", `{"name": "<Ann>"}`)
	out = c.ok(t, "templates", "render", "-account", "shop", "-name", "welcome", "-params", params, "-subject", "For {{name}}")
	if out != "Subject: For <Ann>\n\n<p>Hello &lt;Ann&gt;, v2</p>\n" {
		t.Errorf("render of the draft printed %q", out)
	}
	r = c.run(t, "templates", "render", "-account", "shop", "-name", "welcome", "-published")
	if r.code != 0 || r.stdout != "<p>Hello , v1</p>\n" || !strings.Contains(r.stderr, "missing params: name") {
		t.Errorf("render -published: %+v", r)
	}
	out = c.ok(t, "templates", "render", "-account", "shop", "-file", writeFile(t, "t.txt", "Dear {{name}} & co"), "-text", "-params", params)
	if out != "Dear <Ann> & co\n" {
		t.Errorf("render -text printed %q", out)
	}
	if r := c.run(t, "templates", "render", "-account", "shop", "-name", "raw"); r.code != 1 || !strings.Contains(r.stderr, "raw:3:3: ") {
		t.Errorf("render of a bad draft: %+v", r)
	}

	var list struct{ Templates []templatestore.Template }
	c.jsonOf(t, &list, "templates", "list", "-account", "shop")
	if len(list.Templates) != 2 || list.Templates[0].ID != "raw" || list.Templates[1].ID != "welcome" || list.Templates[0].Published != nil {
		t.Errorf("list: %+v", list)
	}
	c.jsonOf(t, &list, "templates", "list", "-account", "other")
	if len(list.Templates) != 0 {
		t.Errorf("other account's list: %+v", list)
	}
	if r := c.run(t, "templates", "info", "-account", "other", "-name", "welcome"); r.code != 1 || !strings.Contains(r.stderr, "template not found") {
		t.Errorf("info from another account: %+v", r)
	}

	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"add", "-account", "shop", "-name", "welcome", "-file", v1}, 1, "templates update"},
		{[]string{"publish", "-account", "shop", "-name", "welcome", "-version", "9"}, 1, "templates info lists"},
		{[]string{"add", "-account", "shop", "-name", "a/b", "-file", v1}, 1, "invalid id"},
		{[]string{"add", "-account", "shop", "-name", "x"}, 2, "-file is required"},
		{[]string{"info", "-account", "shop"}, 2, "-name is required"},
		{[]string{"render", "-account", "shop"}, 2, "give -name or -file"},
		{[]string{"rename"}, 2, "unknown templates command"},
	} {
		if r := c.run(t, append([]string{"templates"}, tc.args...)...); r.code != tc.code || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("templates %v: %+v; want exit %d and %q", tc.args, r, tc.code, tc.want)
		}
	}

	out = c.ok(t, "templates", "delete", "-account", "shop", "-name", "welcome")
	if !strings.Contains(out, "deleted template welcome") {
		t.Errorf("delete printed %q", out)
	}
	if _, err := store.Template(t.Context(), "shop", "welcome"); err == nil {
		t.Error("the template is still there after delete")
	}
}
