package httpapi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/postroom/postroom"
)

// TestErrors checks every whole-call failure's status, code and field.
func TestErrors(t *testing.T) {
	keys := postroom.StaticKeys{"acct": {"k"}}
	templates := memoryTemplates(t, map[string]string{
		"acct/good": "Hello {{name}}",
		"acct/bad":  "Hello {{#if name}}",
		"other/x":   "another account's template",
	})
	discard := postroom.TransportFunc(func(context.Context, *postroom.Envelope) error { return nil })
	api, _ := startMailer(t, discard, postroom.Options{Auth: keys, Templates: templates})
	small, _ := startHandler(t, discard, postroom.Options{Auth: keys}, Options{MaxBodyBytes: 4096})
	broken, brokenLog := startMailer(t, discard, postroom.Options{Templates: brokenStore{}})

	call := func(edit func(c *postroom.Call)) []byte {
		c := smallCall(2)
		edit(c)
		return marshal(t, c)
	}
	stored := func(edit func(c *postroom.Call)) []byte {
		return call(func(c *postroom.Call) {
			c.Message.Text = ""
			c.Message.TextTemplateID = "good"
			edit(c)
		})
	}
	// edit rewrites the JSON of a small call as a generic object, to add
	// what postroom.Call cannot hold.
	edit := func(f func(m map[string]any)) []byte {
		var m map[string]any
		if err := json.Unmarshal(call(func(*postroom.Call) {}), &m); err != nil {
			t.Fatal(err)
		}
		f(m)
		return marshal(t, m)
	}
	message := func(m map[string]any) map[string]any { return m["message"].(map[string]any) }
	recipient := func(m map[string]any, i int) map[string]any { return m["recipients"].([]any)[i].(map[string]any) }
	const send, sendTemplate = "/api/1.0/message.send", "/api/1.0/message.send_template"

	for _, tc := range []struct {
		name        string
		server      string
		method      string
		path        string
		contentType string
		body        []byte
		status      int
		code        string
		field       string
		fields      []string
		allow       string
	}{
		{name: "invalid json", body: []byte(`{"key": "k", "recipients": [`), status: 400, code: "invalid_json"},
		{name: "empty body", body: nil, status: 400, code: "invalid_json"},
		{name: "two values", body: []byte(`{} {}`), status: 400, code: "invalid_json"},
		{name: "null body", body: []byte(`null`), status: 400, code: "invalid_json", field: "(body)"},
		{name: "array body", body: []byte(`[]`), status: 400, code: "invalid_json", field: "(body)"},
		{name: "unknown top-level field", body: edit(func(m map[string]any) { m["massage"] = map[string]any{} }),
			status: 400, code: "invalid_json", field: "massage"},
		{name: "unknown message field", body: edit(func(m map[string]any) { message(m)["htmll"] = "<p>hi</p>" }),
			status: 400, code: "invalid_json", field: "message.htmll"},
		{name: "unknown recipient field", body: edit(func(m map[string]any) { recipient(m, 1)["emial"] = "x@example.org" }),
			status: 400, code: "invalid_json", field: "recipients[1].emial"},
		{name: "unknown header field", body: edit(func(m map[string]any) {
			message(m)["headers"] = []any{map[string]any{"name": "X-A", "value": "1"}, map[string]any{"nam": "X-B", "value": "2"}}
		}), status: 400, code: "invalid_json", field: "message.headers[1].nam"},
		{name: "unknown image field", body: edit(func(m map[string]any) {
			message(m)["images"] = []any{map[string]any{"name": "a.png", "cid": "a", "content_type": "image/png", "content": "", "size": 3}}
		}), status: 400, code: "invalid_json", field: "message.images[0].size"},
		{name: "unknown attachment field", body: edit(func(m map[string]any) {
			message(m)["attachments"] = []any{map[string]any{"filename": "a.pdf"}}
		}), status: 400, code: "invalid_json", field: "message.attachments[0].filename"},
		{name: "field in another case", body: edit(func(m map[string]any) { message(m)["Subject"] = "hi" }),
			status: 400, code: "invalid_json", field: "message.Subject"},
		{name: "repeated field", body: []byte(`{"key":"k","account_id":"acct","key":"k2","recipients":[{"email":"a@example.org"}],"message":{"from_email":"s@example.com","text":"t"}}`),
			status: 400, code: "invalid_json", field: "key"},
		{name: "number for a string", body: edit(func(m map[string]any) { recipient(m, 0)["email"] = 5 }),
			status: 400, code: "invalid_json", field: "recipients[0].email"},
		{name: "object for a list", body: edit(func(m map[string]any) { m["recipients"] = map[string]any{} }),
			status: 400, code: "invalid_json", field: "recipients"},
		{name: "list for params", body: edit(func(m map[string]any) { m["global_params"] = []any{1} }),
			status: 400, code: "invalid_json", field: "global_params"},
		{name: "validation error", body: call(func(c *postroom.Call) { c.Message.FromEmail = "not an address" }),
			status: 400, code: "validation_error", field: "message.from_email"},
		{name: "several validation errors", body: call(func(c *postroom.Call) {
			c.Message.FromEmail = "not an address"
			c.Message.TemplateEngine = "mustache"
		}), status: 400, code: "validation_error", field: "message.from_email", fields: []string{"message.from_email", "message.template_engine"}},
		{name: "no recipients", body: call(func(c *postroom.Call) { c.Recipients = []postroom.Recipient{} }),
			status: 400, code: "no_recipients", field: "recipients"},
		{name: "recipients absent", body: call(func(c *postroom.Call) { c.Recipients = nil }),
			status: 400, code: "no_recipients", field: "recipients"},
		{name: "too many recipients", body: marshal(t, smallCall(postroom.DefaultMaxRecipients+1)),
			status: 400, code: "too_many_recipients", field: "recipients"},
		{name: "unknown template", path: sendTemplate, body: stored(func(c *postroom.Call) { c.Message.HTMLTemplateID = "nope" }),
			status: 400, code: "unknown_template", field: "message.html_template_id"},
		{name: "another account's template", path: sendTemplate, body: stored(func(c *postroom.Call) { c.Message.TextTemplateID = "x" }),
			status: 400, code: "unknown_template", field: "message.text_template_id"},
		{name: "two unknown templates", path: sendTemplate, body: stored(func(c *postroom.Call) {
			c.Message.HTMLTemplateID = "nope"
			c.Message.TextTemplateID = "gone"
		}), status: 400, code: "unknown_template", field: "message.html_template_id", fields: []string{"message.html_template_id", "message.text_template_id"}},
		{name: "template syntax", body: call(func(c *postroom.Call) { c.Message.Text = "Hello {{#each x}}" }),
			status: 400, code: "template_syntax", field: "message.text"},
		{name: "template syntax among other errors", body: call(func(c *postroom.Call) {
			c.Message.Text = "Hello {{#each x}}"
			c.Message.Headers = []postroom.Header{{Name: "Bad Name", Value: "1"}}
		}), status: 400, code: "template_syntax", field: "message.text", fields: []string{"message.text", "message.headers[0].name"}},
		{name: "stored template syntax", path: sendTemplate, body: stored(func(c *postroom.Call) { c.Message.TextTemplateID = "bad" }),
			status: 400, code: "template_syntax", field: "message.text_template_id"},
		{name: "wrong key", body: call(func(c *postroom.Call) { c.Key = "wrong" }), status: 401, code: "invalid_key"},
		{name: "unknown account", body: call(func(c *postroom.Call) { c.AccountID = "other" }), status: 401, code: "invalid_key"},
		{name: "GET", method: http.MethodGet, status: 405, code: "method_not_allowed", allow: "POST"},
		{name: "PUT", method: http.MethodPut, path: sendTemplate, body: call(func(*postroom.Call) {}), status: 405, code: "method_not_allowed", allow: "POST"},
		{name: "too large", server: "small", body: call(func(c *postroom.Call) { c.Message.Text = strings.Repeat("x", 5000) }),
			status: 413, code: "too_large"},
		{name: "text/plain", contentType: "text/plain", body: call(func(*postroom.Call) {}), status: 415, code: "unsupported_media_type"},
		{name: "form", contentType: "application/x-www-form-urlencoded", body: call(func(*postroom.Call) {}), status: 415, code: "unsupported_media_type"},
		{name: "no content type", contentType: "-", body: call(func(*postroom.Call) {}), status: 415, code: "unsupported_media_type"},
		{name: "json in latin1", contentType: "application/json; charset=iso-8859-1", body: call(func(*postroom.Call) {}), status: 415, code: "unsupported_media_type"},
		{name: "unknown path", path: "/api/1.0/message.sned", body: call(func(*postroom.Call) {}), status: 404, code: "not_found"},
		{name: "no template store", server: "small", path: sendTemplate, body: stored(func(*postroom.Call) {}), status: 501, code: "not_configured"},
		{name: "template store fails", server: "broken", path: sendTemplate, body: stored(func(*postroom.Call) {}), status: 500, code: "internal"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := map[string]string{"": api, "small": small, "broken": broken}[tc.server]
			method, path, contentType := tc.method, tc.path, tc.contentType
			if method == "" {
				method = http.MethodPost
			}
			if path == "" {
				path = send
			}
			switch contentType {
			case "":
				contentType = "application/json"
			case "-":
				contentType = ""
			}
			r := do(t, t.Context(), method, base+path, contentType, tc.body)
			if r.Status != tc.status || r.Error.Status != "error" || r.Error.Code != tc.code || r.Error.Field != tc.field {
				t.Errorf("got %d %+v; want %d code %q field %q", r.Status, r.Error, tc.status, tc.code, tc.field)
			}
			if r.Error.Message == "" || r.Type != "application/json" {
				t.Errorf("message %q, Content-Type %q: want a message and application/json", r.Error.Message, r.Type)
			}
			if tc.fields != nil && !equalSet(r.Error.Fields, tc.fields) {
				t.Errorf("fields %q; want %q", r.Error.Fields, tc.fields)
			}
			if tc.fields != nil && (len(r.Error.Fields) == 0 || r.Error.Fields[0] != tc.field) {
				t.Errorf("fields %q: want %q first", r.Error.Fields, tc.field)
			}
			if r.Allow != tc.allow {
				t.Errorf("Allow %q; want %q", r.Allow, tc.allow)
			}
		})
	}

	t.Run("500 keeps the detail in the log", func(t *testing.T) {
		r := post(t, t.Context(), broken+sendTemplate, "application/json", stored(func(*postroom.Call) {}))
		if bytes.Contains(r.Body, []byte("/srv/templates")) || bytes.Contains(r.Body, []byte("input/output")) {
			t.Errorf("the 500 answer reveals the store's error: %s", r.Body)
		}
		if !strings.Contains(brokenLog.String(), "input/output error") {
			t.Errorf("the log lacks the store's error:\n%s", brokenLog.String())
		}
	})

	t.Run("params take any keys", func(t *testing.T) {
		body := edit(func(m map[string]any) {
			m["global_params"] = map[string]any{"htmll": 1, "nested": map[string]any{"any": []any{"thing", nil}}}
			recipient(m, 0)["params"] = map[string]any{"emial": "x", "name": nil}
		})
		if r := post(t, t.Context(), api+send, "application/json", body); r.Status != http.StatusOK || len(r.Results) != 2 {
			t.Errorf("got %d %s; want 200 with 2 results", r.Status, r.Body)
		}
	})
}

func equalSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	n := map[string]int{}
	for _, s := range a {
		n[s]++
	}
	for _, s := range b {
		n[s]--
	}
	for _, v := range n {
		if v != 0 {
			return false
		}
	}
	return true
}

// TestCallTimeout: a call that outlasts Options.CallTimeout is answered
// with its results, the unfinished recipients deferred.
func TestCallTimeout(t *testing.T) {
	tr := newBlockingTransport(3)
	url, _ := startHandler(t, tr, postroom.Options{}, Options{CallTimeout: 500 * time.Millisecond})

	r := post(t, t.Context(), url+"/api/1.0/message.send", "application/json", marshal(t, smallCall(3)))
	if r.Status != http.StatusOK || len(r.Results) != 3 {
		t.Fatalf("got %d %s; want 200 with 3 results", r.Status, r.Body)
	}
	for i, res := range r.Results {
		if res.Status != postroom.StatusDeferred || !strings.HasPrefix(res.Reason, string(postroom.ReasonTimeout)) {
			t.Errorf("result %d = %+v; want deferred, %s", i, res, postroom.ReasonTimeout)
		}
	}
}

// TestTransportUnusable: when the transport cannot deliver at all (a refused
// SMTP login), the call is answered with honest deferred results and the
// cause is logged.
func TestTransportUnusable(t *testing.T) {
	refused := postroom.TransportFunc(func(context.Context, *postroom.Envelope) error {
		return fmt.Errorf("smtp: AUTH: 535 5.7.8 bad credentials: %w", postroom.ErrTransportUnusable)
	})
	url, log := startMailer(t, refused, postroom.Options{Concurrency: 1})
	r := post(t, t.Context(), url+"/api/1.0/message.send", "application/json", marshal(t, smallCall(5)))
	if r.Status != http.StatusOK || len(r.Results) != 5 {
		t.Fatalf("got %d %s; want 200 with 5 results", r.Status, r.Body)
	}
	for i, res := range r.Results {
		if res.Status != postroom.StatusDeferred {
			t.Errorf("result %d = %+v; want deferred", i, res)
		}
	}
	if !strings.Contains(log.String(), "bad credentials") {
		t.Errorf("the log lacks the transport's error:\n%s", log.String())
	}
}

// TestSlowBody: a body that does not arrive within the read timeout is
// answered 408, not left hanging or answered with an empty 200.
func TestSlowBody(t *testing.T) {
	discard := postroom.TransportFunc(func(context.Context, *postroom.Envelope) error { return nil })
	m, err := postroom.New(discard, postroom.Options{Auth: postroom.NoAuth{}})
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(m, Options{})
	if err != nil {
		t.Fatal(err)
	}
	url := serve(t, h, time.Second)

	conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if _, err := io.WriteString(conn, "POST /api/1.0/message.send HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"key\":"); err != nil {
		t.Fatal(err)
	}
	if err := conn.SetReadDeadline(time.Now().Add(30 * time.Second)); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a stalled body: %v", err)
	}
	defer resp.Body.Close()
	var e apiError
	if err := json.NewDecoder(resp.Body).Decode(&e); err != nil || resp.StatusCode != http.StatusRequestTimeout || e.Code != "timeout" {
		t.Errorf("got %d %+v (%v); want 408 timeout", resp.StatusCode, e, err)
	}
}
