package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/testkit/dbtest"
	"github.com/postroom/postroom/internal/testkit/pgtest"
	"github.com/postroom/postroom/sqldb/pgxdb"
	"github.com/postroom/postroom/templatestore"
	"github.com/postroom/postroom/transport"
)

// tplClient posts to a Handler serving the templates endpoints, as
// account acme with its key unless told otherwise.
type tplClient struct {
	t   *testing.T
	url string
	tr  *transport.Memory
}

// tplAnswer is an answer of the Handler.
type tplAnswer struct {
	status int
	body   []byte
}

// post posts fields, with acme's key and account, to path.
func (c tplClient) post(path string, fields map[string]any) tplAnswer {
	c.t.Helper()
	v := map[string]any{"key": "acme-key", "account_id": "acme"}
	for k, f := range fields {
		v[k] = f
	}
	body, err := json.Marshal(v)
	if err != nil {
		c.t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(c.t.Context(), http.MethodPost, c.url+path, bytes.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	if _, err := b.ReadFrom(resp.Body); err != nil {
		c.t.Fatal(err)
	}
	return tplAnswer{resp.StatusCode, b.Bytes()}
}

// template posts to path and decodes the template answered 200.
func (c tplClient) template(path string, fields map[string]any) templateAnswer {
	c.t.Helper()
	var a templateAnswer
	c.decode(c.post(path, fields), http.StatusOK, &a)
	return a
}

func (c tplClient) decode(a tplAnswer, status int, v any) {
	c.t.Helper()
	if a.status != status {
		c.t.Fatalf("status %d, body %s; want %d", a.status, a.body, status)
	}
	if err := json.Unmarshal(a.body, v); err != nil {
		c.t.Fatalf("body %s: %v", a.body, err)
	}
}

// refused checks an error answer's status, code and field.
func (c tplClient) refused(a tplAnswer, status int, code, field string) templateErrorAnswer {
	c.t.Helper()
	e := templateErrorAnswer{apiError: &apiError{}}
	c.decode(a, status, &e)
	if e.Status != "error" || e.Code != code || e.Field != field {
		c.t.Errorf("error %s; want %d %s on %q", a.body, status, code, field)
	}
	return e
}

// send sends acme's template welcome to ann with message.send_template
// and returns the html the transport got, "" when the call was refused.
func (c tplClient) send() (string, tplAnswer) {
	c.t.Helper()
	c.tr.Reset()
	a := c.post(SendTemplatePath, map[string]any{
		"message":    map[string]any{"from_email": "shop@example.com", "subject": "Hi", "html_template_id": "welcome"},
		"recipients": []map[string]any{{"email": "ann@example.org", "params": map[string]any{"name": "Ann"}}},
	})
	envs := c.tr.Envelopes()
	if a.status != http.StatusOK || len(envs) != 1 {
		return "", a
	}
	data := string(envs[0].Data)
	for _, v := range []string{"v1", "v2"} {
		if strings.Contains(data, "Hello Ann, "+v) {
			return v, a
		}
	}
	c.t.Fatalf("sent a message of no known version:\n%s", data)
	return "", a
}

// startTemplates serves a Mailer over store, with acme's and other's
// keys, and the templates endpoints over store.
func startTemplates(t *testing.T, store templatestore.Manager) tplClient {
	tr := transport.NewMemory()
	url, _ := startHandler(t, tr, postroom.Options{Templates: store, Auth: postroom.StaticKeys{"acme": {"acme-key"}, "other": {"other-key"}}},
		Options{Templates: store})
	return tplClient{t: t, url: url, tr: tr}
}

func TestTemplatesMemory(t *testing.T) {
	testTemplates(t, templatestore.NewMemory())
}

func TestTemplatesSQL(t *testing.T) {
	db := pgtest.NewPool(t)
	if err := templatestore.Migrate(t.Context(), pgxdb.New(db)); err != nil {
		t.Fatal(err)
	}
	testTemplates(t, templatestore.NewSQL(pgxdb.New(db)))
}

func TestTemplatesSQLite(t *testing.T) {
	db := dbtest.SQLite(t)
	if err := templatestore.Migrate(t.Context(), db); err != nil {
		t.Fatal(err)
	}
	testTemplates(t, templatestore.NewSQL(db))
}

// testTemplates: a template added, sent, updated (the draft: calls keep
// the published version), published, rolled back, refused when it does
// not compile (with its line and column), rendered, listed and deleted,
// all over HTTP, each account on its own.
func testTemplates(t *testing.T, store templatestore.Manager) {
	c := startTemplates(t, store)

	if v, a := c.send(); v != "" {
		t.Fatalf("send before any template: %s", a.body)
	} else {
		c.refused(a, http.StatusBadRequest, "unknown_template", "message.html_template_id")
	}
	tpl := c.template(TemplatesAddPath, map[string]any{"name": "welcome", "code": "<p>Hello {{name}}, v1</p>", "publish": true})
	if tpl.Name != "welcome" || tpl.Slug != "welcome" || tpl.PublishVersion != 1 || tpl.PublishCode == nil || *tpl.PublishCode != "<p>Hello {{name}}, v1</p>" || tpl.PublishedAt == nil {
		t.Fatalf("add: %+v", tpl)
	}
	if v, a := c.send(); v != "v1" {
		t.Fatalf("send after add: %s %s", v, a.body)
	}

	tpl = c.template(TemplatesUpdatePath, map[string]any{"name": "welcome", "code": "<p>Hello {{name}}, v2</p>"})
	if tpl.Code != "<p>Hello {{name}}, v2</p>" || *tpl.PublishCode != "<p>Hello {{name}}, v1</p>" {
		t.Fatalf("update (draft): %+v", tpl)
	}
	if v, _ := c.send(); v != "v1" {
		t.Fatalf("send after a draft update: %s, want the published v1", v)
	}
	if tpl = c.template(TemplatesPublishPath, map[string]any{"name": "welcome"}); tpl.PublishVersion != 2 {
		t.Fatalf("publish: %+v", tpl)
	}
	if v, _ := c.send(); v != "v2" {
		t.Fatalf("send after publish: %s", v)
	}
	if tpl = c.template(TemplatesPublishPath, map[string]any{"name": "welcome", "version": 1}); tpl.PublishVersion != 3 || *tpl.PublishCode != "<p>Hello {{name}}, v1</p>" {
		t.Fatalf("publish version 1: %+v", tpl)
	}
	if v, _ := c.send(); v != "v1" {
		t.Fatalf("send after rolling back to version 1: %s", v)
	}

	// A template that does not compile is refused, at its line and
	// column, and nothing changes.
	bad := "<p>Hello</p>\n<ul>\n  {{#each items}}<li>{{this}}</li>\n</ul>"
	for _, path := range []string{TemplatesAddPath, TemplatesUpdatePath} {
		e := c.refused(c.post(path, map[string]any{"name": "welcome", "code": bad, "publish": true}), http.StatusBadRequest, "template_syntax", "code")
		if e.Line != 3 || e.Column != 3 || !strings.Contains(e.Message, "line 3, column 3") {
			t.Errorf("%s of a bad template: %+v", path, e)
		}
	}
	info := c.template(TemplatesInfoPath, map[string]any{"name": "welcome"})
	var versions []int
	for _, v := range info.Versions {
		versions = append(versions, v.Version)
	}
	if info.Code != "<p>Hello {{name}}, v2</p>" || !slices.Equal(versions, []int{3, 2, 1}) || info.Versions[0].FromVersion != 1 {
		t.Errorf("info after the refusals: %+v", info)
	}

	// render: the draft, the live version, a source not stored.
	var r renderAnswer
	c.decode(c.post(TemplatesRenderPath, map[string]any{"name": "welcome", "params": map[string]any{"name": "<Bo>"}, "subject": "For {{name}}"}), http.StatusOK, &r)
	if r.HTML != "<p>Hello &lt;Bo&gt;, v2</p>" || r.Subject != "For <Bo>" || len(r.Missing) != 0 {
		t.Errorf("render of the draft: %+v", r)
	}
	r = renderAnswer{}
	c.decode(c.post(TemplatesRenderPath, map[string]any{"name": "welcome", "published": true}), http.StatusOK, &r)
	if r.HTML != "<p>Hello , v1</p>" || !slices.Equal(r.Missing, []string{"name"}) {
		t.Errorf("render of the live version: %+v", r)
	}
	r = renderAnswer{}
	c.decode(c.post(TemplatesRenderPath, map[string]any{"code": "Dear {{name}} & co", "as": "text", "params": map[string]any{"name": "Ann"}}), http.StatusOK, &r)
	if r.Text != "Dear Ann & co" || r.HTML != "" {
		t.Errorf("render of code as text: %+v", r)
	}
	if e := c.refused(c.post(TemplatesRenderPath, map[string]any{"code": "{{#if a}}"}), http.StatusBadRequest, "template_syntax", "code"); e.Line != 1 {
		t.Errorf("render of a bad source: %+v", e)
	}

	// Refusals.
	c.refused(c.post(TemplatesAddPath, map[string]any{"name": "welcome", "code": "x"}), http.StatusConflict, "template_exists", "name")
	c.refused(c.post(TemplatesInfoPath, map[string]any{"name": "nope"}), http.StatusNotFound, "unknown_template", "name")
	c.refused(c.post(TemplatesUpdatePath, map[string]any{"name": "nope", "code": "x"}), http.StatusNotFound, "unknown_template", "name")
	c.refused(c.post(TemplatesPublishPath, map[string]any{"name": "welcome", "version": 99}), http.StatusNotFound, "unknown_version", "version")
	c.refused(c.post(TemplatesPublishPath, map[string]any{"name": "welcome", "version": -1}), http.StatusBadRequest, "validation_error", "version")
	c.refused(c.post(TemplatesAddPath, map[string]any{"name": "../x", "code": "x"}), http.StatusBadRequest, "validation_error", "name")
	c.refused(c.post(TemplatesAddPath, map[string]any{"name": "t", "code": ""}), http.StatusBadRequest, "validation_error", "code")
	c.refused(c.post(TemplatesAddPath, map[string]any{"name": "t", "code": "x", "text": "y"}), http.StatusBadRequest, "validation_error", "text")
	c.refused(c.post(TemplatesAddPath, map[string]any{"name": "t", "code": "x", "subject": "y"}), http.StatusBadRequest, "invalid_json", "")
	c.refused(c.post(TemplatesInfoPath, map[string]any{"name": "welcome", "key": "wrong"}), http.StatusUnauthorized, "invalid_key", "")

	// Another account reaches none of acme's templates, with its own key
	// or with acme's.
	for _, path := range []string{TemplatesInfoPath, TemplatesPublishPath, TemplatesDeletePath} {
		c.refused(c.post(path, map[string]any{"name": "welcome", "account_id": "other", "key": "other-key"}), http.StatusNotFound, "unknown_template", "name")
		c.refused(c.post(path, map[string]any{"name": "welcome", "account_id": "other", "key": "acme-key"}), http.StatusUnauthorized, "invalid_key", "")
	}
	var list []templateAnswer
	c.decode(c.post(TemplatesListPath, map[string]any{"account_id": "other", "key": "other-key"}), http.StatusOK, &list)
	if len(list) != 0 {
		t.Errorf("other's list: %+v", list)
	}

	c.template(TemplatesAddPath, map[string]any{"name": "welcome.txt", "code": "Hello {{name}}"})
	c.decode(c.post(TemplatesListPath, nil), http.StatusOK, &list)
	if len(list) != 2 || list[0].Name != "welcome" || list[1].Name != "welcome.txt" || list[1].PublishCode != nil || list[0].Versions != nil {
		t.Errorf("list: %+v", list)
	}

	gone := c.template(TemplatesDeletePath, map[string]any{"name": "welcome"})
	if gone.Name != "welcome" || len(gone.Versions) != 3 {
		t.Errorf("delete: %+v", gone)
	}
	c.refused(c.post(TemplatesInfoPath, map[string]any{"name": "welcome"}), http.StatusNotFound, "unknown_template", "name")
	if v, _ := c.send(); v != "" {
		t.Errorf("send after delete: %s", v)
	}
}

// TestTemplatesNotServed: without Options.Templates the paths are
// unknown.
func TestTemplatesNotServed(t *testing.T) {
	url, _ := startHandler(t, transport.NewMemory(), postroom.Options{Templates: templatestore.NewMemory()}, Options{})
	c := tplClient{t: t, url: url}
	c.refused(c.post(TemplatesListPath, nil), http.StatusNotFound, "not_found", "")
}
