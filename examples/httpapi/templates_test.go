package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/postroom/postroom"
)

func TestParseFlagsTemplatesInMemory(t *testing.T) {
	for _, tc := range []struct {
		args []string
		ok   bool
	}{
		{[]string{"-no-auth", "-templates-in-memory"}, true},
		{[]string{"-no-auth", "-templates-in-memory", "-templates", "tpl"}, false},
		// The templates in memory, the rest in the database.
		{[]string{"-no-auth", "-templates-in-memory", "-database-url", "postgres://app@db/app"}, true},
	} {
		cfg, err := parseFlags(tc.args, func(string) string { return "" }, io.Discard)
		if (err == nil) != tc.ok || (tc.ok && !cfg.TemplatesInMemory) {
			t.Errorf("parseFlags(%q): %+v, %v", tc.args, cfg.TemplatesInMemory, err)
		}
	}
}

// TestManagedTemplates: templates added, sent, updated (a draft, which
// calls do not use), published, rolled back to version 1 and refused when
// they do not compile, naming the line and column, all over HTTP on the
// server as run builds it: with -database-url and with
// -templates-in-memory. Without either, or with -templates (a folder,
// read-only), the templates endpoints are not served.
func TestManagedTemplates(t *testing.T) {
	t.Run("database", func(t *testing.T) {
		db := openTestDB(t, migrated.DSN(t))
		testManagedTemplates(t, config{DB: db})
	})
	t.Run("memory", func(t *testing.T) {
		testManagedTemplates(t, config{TemplatesInMemory: true})
	})
	for name, cfg := range map[string]config{
		"none":   {},
		"folder": {Templates: writeTemplates(t, map[string]string{"acct/welcome": "Hi"})},
	} {
		t.Run(name, func(t *testing.T) {
			cfg.EMLDir, cfg.NoAuth = t.TempDir(), true
			api, _ := startConfig(t, cfg)
			r := postTemplates(t, api+"/api/1.0/templates.list", []byte(`{"key":"k","account_id":"acct"}`))
			if r.Status != http.StatusNotFound || r.Error.Code != "not_found" {
				t.Errorf("templates.list: %d %s; want 404 not_found", r.Status, r.Body)
			}
		})
	}
}

func testManagedTemplates(t *testing.T, cfg config) {
	outbox := t.TempDir()
	cfg.EMLDir = outbox
	cfg.Keys = writeKeys(t, map[string][]string{"acct": {"acct-key"}, "other": {"other-key"}})
	api, _ := startConfig(t, cfg)

	// call posts fields with acct's key to an endpoint and decodes a 200
	// answer into out, or returns the error answer.
	call := func(endpoint string, fields map[string]any, out any) *templatesResponse {
		t.Helper()
		body := map[string]any{"key": "acct-key", "account_id": "acct"}
		for k, v := range fields {
			body[k] = v
		}
		r := postTemplates(t, api+"/api/1.0/"+endpoint, marshal(t, body))
		if r.Status == http.StatusOK && out != nil {
			if err := json.Unmarshal(r.Body, out); err != nil {
				t.Fatalf("%s: %v\n%s", endpoint, err, r.Body)
			}
		}
		return r
	}
	ok := func(endpoint string, fields map[string]any) {
		t.Helper()
		var tpl struct {
			Name string `json:"name"`
		}
		if r := call(endpoint, fields, &tpl); r.Status != http.StatusOK || tpl.Name != fields["name"] {
			t.Fatalf("%s: %d %s", endpoint, r.Status, r.Body)
		}
	}
	// sent sends acct's template welcome and returns the version the
	// message holds.
	sent := func() string {
		t.Helper()
		c := smallCall(1)
		c.Key, c.AccountID = "acct-key", "acct"
		c.Message.Text, c.Message.HTMLTemplateID = "", "welcome"
		r := post(t, t.Context(), api+"/api/1.0/message.send_template", "application/json", marshal(t, c))
		if r.Status != http.StatusOK || len(r.Results) != 1 || r.Results[0].Status != postroom.StatusSent {
			t.Fatalf("send_template: %d %s", r.Status, r.Body)
		}
		data, err := os.ReadFile(filepath.Join(outbox, r.Results[0].SendID+".eml"))
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range []string{"first", "second"} {
			if bytes.Contains(data, []byte("The "+v+" welcome, User 0.")) {
				return v
			}
		}
		t.Fatalf("the message holds no known version:\n%s", data)
		return ""
	}

	ok("templates.add", map[string]any{"name": "welcome", "code": "<p>The first welcome, {{name}}.</p>", "publish": true})
	if v := sent(); v != "first" {
		t.Fatalf("sent the %s version after add", v)
	}
	ok("templates.update", map[string]any{"name": "welcome", "code": "<p>The second welcome, {{name}}.</p>"})
	if v := sent(); v != "first" {
		t.Fatalf("sent the %s version after a draft update; want the published first", v)
	}
	ok("templates.publish", map[string]any{"name": "welcome"})
	if v := sent(); v != "second" {
		t.Fatalf("sent the %s version after publish", v)
	}
	ok("templates.publish", map[string]any{"name": "welcome", "version": 1})
	if v := sent(); v != "first" {
		t.Fatalf("sent the %s version after rolling back to version 1", v)
	}

	var refusal struct {
		Code, Field, Message string
		Line, Column         int
	}
	bad := "<p>Hi</p>\n<ul>\n  {{#each items}}<li>{{this}}</li>\n</ul>"
	r := call("templates.update", map[string]any{"name": "welcome", "code": bad, "publish": true}, nil)
	if err := json.Unmarshal(r.Body, &refusal); err != nil || r.Status != http.StatusBadRequest {
		t.Fatalf("update with a bad template: %d %s", r.Status, r.Body)
	}
	if refusal.Code != "template_syntax" || refusal.Field != "code" || refusal.Line != 3 || refusal.Column != 3 || !strings.Contains(refusal.Message, "line 3, column 3") {
		t.Errorf("refusal %+v", refusal)
	}
	if v := sent(); v != "first" {
		t.Fatalf("sent the %s version after a refused update", v)
	}

	var info struct {
		Code     string `json:"code"`
		Versions []struct {
			Version     int `json:"version"`
			FromVersion int `json:"from_version"`
		} `json:"versions"`
	}
	if r := call("templates.info", map[string]any{"name": "welcome"}, &info); r.Status != http.StatusOK || len(info.Versions) != 3 || info.Versions[0].FromVersion != 1 || info.Code != "<p>The second welcome, {{name}}.</p>" {
		t.Errorf("info: %d %s", r.Status, r.Body)
	}
	var rendered struct{ HTML string }
	if r := call("templates.render", map[string]any{"name": "welcome", "params": map[string]any{"name": "Ann"}}, &rendered); r.Status != http.StatusOK || rendered.HTML != "<p>The second welcome, Ann.</p>" {
		t.Errorf("render: %d %s", r.Status, r.Body)
	}
	// The other account sees none of acct's templates.
	if r := call("templates.info", map[string]any{"name": "welcome", "account_id": "other", "key": "other-key"}, nil); r.Status != http.StatusNotFound || r.Error.Code != "unknown_template" {
		t.Errorf("info from another account: %d %s", r.Status, r.Body)
	}
}

// templatesResponse is an answer of a templates endpoint: its status, its
// body, and the error in it, if any.
type templatesResponse struct {
	Status int
	Body   []byte
	Error  struct {
		Code string `json:"code"`
	}
}

// postTemplates posts body as JSON to url.
func postTemplates(t *testing.T, url string, body []byte) *templatesResponse {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := &templatesResponse{Status: resp.StatusCode}
	if r.Body, err = io.ReadAll(resp.Body); err != nil {
		t.Fatal(err)
	}
	if r.Status != http.StatusOK {
		if err := json.Unmarshal(r.Body, &r.Error); err != nil {
			t.Fatalf("%s: %d %s: %v", url, r.Status, r.Body, err)
		}
	}
	return r
}
