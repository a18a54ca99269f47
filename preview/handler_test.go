package preview_test

import (
	"bytes"
	"errors"
	"html"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/preview"
	"github.com/postroom/postroom/templatestore"
)

// post submits form values to the page and returns the answer's status
// and body.
func post(t *testing.T, srv string, values url.Values) (int, string) {
	t.Helper()
	res, err := http.PostForm(srv+prefix+"/", values)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, string(b)
}

// mustContain fails the test for each want the page lacks.
func mustContain(t *testing.T, page string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(page, w) {
			t.Errorf("the page lacks %q", w)
		}
	}
}

// srcdocs returns the documents of the page's iframes.
func srcdocs(page string) []string {
	var docs []string
	for _, m := range regexp.MustCompile(`srcdoc="([^"]*)"`).FindAllStringSubmatch(page, -1) {
		docs = append(docs, html.UnescapeString(m[1]))
	}
	return docs
}

// TestPageServed checks the empty page, its stylesheet and its headers
// under a prefix: relative URLs only, no script, nothing from elsewhere.
func TestPageServed(t *testing.T) {
	srv := newServer(t, postroom.Options{}, preview.Options{})
	res, err := http.Get(srv.URL + prefix + "/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	page := string(b)
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("GET: %s %s", res.Status, res.Header.Get("Content-Type"))
	}
	csp := res.Header.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "img-src data:", "frame-ancestors 'self'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("Content-Security-Policy %q lacks %q", csp, want)
		}
	}
	if strings.Contains(csp, "script-src") {
		t.Errorf("Content-Security-Policy %q allows scripts", csp)
	}
	mustContain(t, page, `<textarea id="body" name="body"`, `href="style.css"`, `action=""`, `type="file" name="file"`)
	for _, bad := range []string{"<script", "http://", "https://", `href="/`, `src="/`} {
		if strings.Contains(page, bad) {
			t.Errorf("the page holds %q", bad)
		}
	}
	res, err = http.Get(srv.URL + prefix + "/style.css")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/css") {
		t.Errorf("style.css: %s %s", res.Status, res.Header.Get("Content-Type"))
	}
	res, err = http.Get(srv.URL + prefix + "/elsewhere")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNotFound {
		t.Errorf("an unknown path: %s, want 404", res.Status)
	}
}

// TestPreviewWorkload checks what the page shows for the shared workload:
// the recipient list, each recipient's html with its cid: images inlined,
// its text, headers and files, and the missing param flagged.
func TestPreviewWorkload(t *testing.T) {
	srv := newServer(t, postroom.Options{}, preview.Options{Shown: 3})
	code, page := post(t, srv.URL, url.Values{"body": {workloadBody(t, 8)}})
	if code != http.StatusOK {
		t.Fatalf("status %d: %s", code, page)
	}
	if n := strings.Count(page, `<input type="checkbox" name="r"`); n != 8 {
		t.Errorf("%d recipients listed, want 8", n)
	}
	if n := strings.Count(page, `<section class="recipient`); n != 3 {
		t.Errorf("%d recipients shown, want the first 3 (Options.Shown)", n)
	}
	mustContain(t, page,
		`id="r0"`, `id="r1"`, `id="r2"`, `user000002@example.org`,
		`<input type="checkbox" name="r" value="2" checked>`,
		`<input type="checkbox" name="r" value="3"> `,
		`<mark class="missing">first_name</mark>`,
		`<code class="param missing">first_name</code>`,
		`<span class="status status-sent">sent</span>`,
		`<iframe class="html" sandbox=""`,
		`attachment <code>invoice.pdf</code> application/pdf`,
		`cid:logo@anchors`, // listed among the files
		`<th>Subject</th><td>Your order #`,
		`<pre>Hi Alice,`,
		`<span class="label">Envelope</span> from <code>`,
		`to <code>user000001@example.org</code></p>`,
	)
	if strings.Contains(page, "allow-scripts") {
		t.Error("the iframe allows scripts")
	}
	if strings.Count(page, `<mark class="missing">`) != 1 {
		t.Error("a param is flagged missing for another recipient than 1")
	}
	docs := srcdocs(page)
	if len(docs) != 3 {
		t.Fatalf("%d iframes, want 3", len(docs))
	}
	for i, doc := range docs {
		if strings.Contains(doc, "cid:") {
			t.Errorf("iframe %d still refers to a cid: URL", i)
		}
		if !strings.Contains(doc, `<img src="data:image/png;base64,iVBOR`) {
			t.Errorf("iframe %d: the logo is not inlined as a data: URL", i)
		}
		if !strings.Contains(doc, "<html") || strings.Contains(doc, "{{") {
			t.Errorf("iframe %d: not a rendered html document", i)
		}
	}
}

// TestPreviewUpload checks a call uploaded as a file, in a multipart form.
func TestPreviewUpload(t *testing.T) {
	srv := newServer(t, postroom.Options{}, preview.Options{})
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	fw, err := mw.CreateFormFile("file", "call.json")
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(fw, workloadBody(t, 2))
	mw.WriteField("recipients", "1")
	mw.Close()
	res, err := http.Post(srv.URL+prefix+"/", mw.FormDataContentType(), &b)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("status %s", res.Status)
	}
	mustContain(t, string(page), `id="r1"`, `&#34;from_email&#34;: &#34;orders@shop.example.com&#34;`)
	if strings.Contains(string(page), `id="r0"`) {
		t.Error("recipient 0 shown, not picked")
	}
}

// TestPreviewPick checks picking recipients by checkbox and by index,
// the limit on recipients shown, and an index out of range.
func TestPreviewPick(t *testing.T) {
	srv := newServer(t, postroom.Options{}, preview.Options{MaxRecipients: 3, MaxListed: 4})
	body := workloadBody(t, 10)
	_, page := post(t, srv.URL, url.Values{"body": {body}, "r": {"7", "2"}, "recipients": {"0-1, 9"}})
	mustContain(t, page, `id="r0"`, `id="r1"`, `id="r2"`, `2 picked beyond the limit are not shown`, `… and 6 more`,
		`<input id="pick" name="recipients" value=""`, `<input type="checkbox" name="r" value="1" checked>`)
	// Unticking a box drops its recipient; the text field keeps the picks
	// of recipients not listed.
	_, page = post(t, srv.URL, url.Values{"body": {body}, "r": {"0", "2"}, "recipients": {"8"}})
	mustContain(t, page, `id="r0"`, `id="r2"`, `id="r8"`, `<input id="pick" name="recipients" value="8"`)
	if strings.Contains(page, `id="r1"`) {
		t.Error("recipient 1 shown, not picked")
	}
	for _, absent := range []string{`id="r7"`, `id="r9"`} {
		if strings.Contains(page, absent) {
			t.Errorf("%s shown beyond MaxRecipients", absent)
		}
	}
	_, page = post(t, srv.URL, url.Values{"body": {body}, "recipients": {"12"}})
	mustContain(t, page, `class="problem"`, `Recipient 12 does not exist`)
	_, page = post(t, srv.URL, url.Values{"body": {body}, "recipients": {"3-x"}})
	mustContain(t, page, `class="problem"`, `write indices and ranges`)
}

// TestPreviewInvalidRecipient checks that a recipient refused shows its
// status and reason and no message.
func TestPreviewInvalidRecipient(t *testing.T) {
	srv := newServer(t, postroom.Options{}, preview.Options{})
	body := strings.Replace(workloadBody(t, 2), "user000001@example.org", "not-an-address", 1)
	_, page := post(t, srv.URL, url.Values{"body": {body}})
	mustContain(t, page, `class="recipient invalid" id="r1"`, `<span class="status status-invalid">invalid</span> <span class="reason">invalid-email`)
	if n := len(srcdocs(page)); n != 1 {
		t.Errorf("%d iframes, want 1 (recipient 0's)", n)
	}
}

// TestPreviewRefusals checks a call refused as a whole: each refusal with
// its field, and the position of a template or JSON syntax error.
func TestPreviewRefusals(t *testing.T) {
	srv := newServer(t, postroom.Options{Auth: postroom.StaticKeys{"acct": {"secret"}}}, preview.Options{})
	call := `{"key": "secret", "account_id": "acct", "message": {"from_email": "a@example.com", "subject": "Hi",
		"html": "<p>one</p>\n<p>{{#if x}}two</p>", "text": "{{name",
		"headers": [{"name": "X-A", "value": "a"}, {"name": "X-B", "value": "b {{#each x}}"}]}, "recipients": [{"email": "b@example.com"}]}`
	_, page := post(t, srv.URL, url.Values{"body": {call}})
	mustContain(t, page, `id="refusals"`,
		`<td class="field"><code>message.html</code></td>`, `<td class="position">line 2`,
		`<pre class="excerpt">&lt;p&gt;{{#if x}}two&lt;/p&gt;</pre>`,
		`<td class="field"><code>message.text</code></td>`, `line 1, column`,
		`<td class="field"><code>message.headers[1].value</code></td>`, `<pre class="excerpt">b {{#each x}}</pre>`)
	if strings.Contains(page, `<section class="recipient`) {
		t.Error("a refused call shows recipients")
	}

	_, page = post(t, srv.URL, url.Values{"body": {"{\n  \"key\": \"secret\",\n  \"message\": {]\n}"}})
	mustContain(t, page, `<code>(body)</code>`, `line 3, column 15`, `not valid JSON`)

	_, page = post(t, srv.URL, url.Values{"body": {`{"key": "secret", "account_id": "acct", "messag": {}}`}})
	mustContain(t, page, `<code>messag</code>`)

	wrong := strings.Replace(call, `"key": "secret"`, `"key": "guess"`, 1)
	_, page = post(t, srv.URL, url.Values{"body": {wrong}})
	mustContain(t, page, `class="problem"`, `the key is not valid for the account`)

	_, page = post(t, srv.URL, url.Values{"body": {"  "}})
	mustContain(t, page, `Paste or upload a call body.`)
}

// TestPreviewStoredTemplates checks message.send_template with the
// account and template ids named in the form.
func TestPreviewStoredTemplates(t *testing.T) {
	store := templatestore.NewDir(fstest.MapFS{
		"shop/welcome":     {Data: []byte(`<p>Welcome {{name}} <img src="cid:logo"></p>`)},
		"shop/welcome-txt": {Data: []byte(`Welcome {{name}}`)},
	})
	srv := newServer(t, postroom.Options{Templates: store}, preview.Options{})
	call := `{"key": "k", "account_id": "other", "message": {"from_email": "a@example.com", "subject": "Hi",
		"images": [{"name": "logo.png", "cid": "logo", "content_type": "image/png", "content": "iVBORw0KGgo="}]},
		"recipients": [{"email": "b@example.com", "params": {"name": "Ann"}}]}`
	_, page := post(t, srv.URL, url.Values{"body": {call}, "op": {"send_template"},
		"account_id": {"shop"}, "html_template_id": {"welcome"}, "text_template_id": {"welcome-txt"}})
	mustContain(t, page, `<code>message.html_template_id</code>`, `<pre>Welcome Ann</pre>`, `value="send_template" checked`)
	docs := srcdocs(page)
	if len(docs) != 1 || !strings.Contains(docs[0], `<p>Welcome Ann <img src="data:image/png;base64,iVBORw0KGgo="></p>`) {
		t.Errorf("iframes %q", docs)
	}
	_, page = post(t, srv.URL, url.Values{"body": {call}, "op": {"send_template"}, "html_template_id": {"welcome"}})
	mustContain(t, page, `<code>message.html_template_id</code>`, `not found`)
}

// TestPreviewCrossOrigin checks that a form posted from another site is
// refused, so that another site cannot use an admin's session.
func TestPreviewCrossOrigin(t *testing.T) {
	srv := newServer(t, postroom.Options{}, preview.Options{})
	req, err := http.NewRequest("POST", srv.URL+prefix+"/", strings.NewReader(url.Values{"body": {workloadBody(t, 1)}}.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusForbidden {
		t.Errorf("cross-site POST: %s, want 403", res.Status)
	}
}

// TestPreviewTooLarge checks Options.MaxBodyBytes.
func TestPreviewTooLarge(t *testing.T) {
	srv := newServer(t, postroom.Options{}, preview.Options{MaxBodyBytes: 1000})
	code, _ := post(t, srv.URL, url.Values{"body": {workloadBody(t, 1)}})
	if code != http.StatusRequestEntityTooLarge {
		t.Errorf("status %d, want 413", code)
	}
}

// TestPreviewEnvelope checks that each recipient shows the envelope its
// message would get: the VERP reverse path, and the bcc, which no header
// field shows.
func TestPreviewEnvelope(t *testing.T) {
	srv := newServer(t, postroom.Options{VERP: postroom.VERP{Domain: "bounce.example.com"}}, preview.Options{})
	call := `{"key": "k", "account_id": "a", "message": {"from_email": "a@example.com", "subject": "Hi",
		"text": "hello", "bcc": "audit@example.com"}, "recipients": [{"email": "b@example.com"}]}`
	code, page := post(t, srv.URL, url.Values{"body": {call}})
	if code != http.StatusOK {
		t.Fatalf("status %d: %s", code, page)
	}
	mustContain(t, page, `<span class="label">Envelope</span> from <code>bounces&#43;`, `@bounce.example.com</code>`,
		`to <code>b@example.com</code>, <code>audit@example.com</code></p>`)
	if strings.Contains(page, "<th>Bcc</th>") {
		t.Error("the bcc shows as a header field")
	}
}

// TestNewOptions: New refuses a nil Mailer and a negative limit, as the
// root's New does, and takes zero as the default.
func TestNewOptions(t *testing.T) {
	m, err := postroom.New(refuseTransport(t), postroom.Options{Auth: postroom.NoAuth{}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := preview.New(nil, preview.Options{}); err == nil {
		t.Error("New(nil Mailer): no error")
	}
	if _, err := preview.New(m, preview.Options{}); err != nil {
		t.Errorf("New with zero Options: %v", err)
	}
	for _, tc := range []struct {
		field string
		opts  preview.Options
	}{
		{"MaxBodyBytes", preview.Options{MaxBodyBytes: -1}},
		{"MaxRecipients", preview.Options{MaxRecipients: -1}},
		{"Shown", preview.Options{Shown: -1}},
		{"MaxListed", preview.Options{MaxListed: -1}},
	} {
		h, err := preview.New(m, tc.opts)
		var oe *postroom.OptionsError
		if !errors.As(err, &oe) || oe.Op != "preview.New" || oe.Field != "Options."+tc.field {
			t.Errorf("New with a negative %s = %v, %v; want a *postroom.OptionsError for Options.%[1]s", tc.field, h, err)
		}
	}
}
