package postroom_test

// The messages the deliverability oracles check (the DKIM verifiers in
// dkim_test.go, SpamAssassin here), the way those programs are found, and
// what a forger on the path can add to a signed message
// (TestDKIMOversigned: each field the signatures cover breaks them).

import (
	"bytes"
	"context"
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/testkit/fixture"
	"github.com/postroom/postroom/internal/testkit/testenv"
	"github.com/postroom/postroom/postroomtest"
)

// corpusCall is a call of the deliverability corpus.
type corpusCall struct {
	name string
	call *postroom.Call
}

// pngPixel is a 1x1 transparent PNG.
const pngPixel = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="

// corpusHTML is a plain html newsletter-like body.
const corpusHTML = `<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>Your weekly summary</title>
<style>p { color: #333333; } .foot { font-size: 12px; }</style></head>
<body>
<h1>Hello {{name}},</h1>
<p>Here is what happened in your account this week. Three orders were shipped,
one is waiting for payment, and your loyalty balance grew by 120 points.</p>
<ul>
<li>Order 1001: shipped on Monday</li>
<li>Order 1002: shipped on Wednesday</li>
<li>Order 1003: waiting for payment</li>
</ul>
<p>You can see every order and its tracking details in
<a href="https://shop.example.com/orders">your order history</a>.</p>
<table>
<tr><th>Item</th><th>Price</th></tr>
<tr><td>Walking boots</td><td>89.00 EUR</td></tr>
<tr><td>Wool socks</td><td>12.50 EUR</td></tr>
</table>
<p class="foot">Thanks for shopping with us &amp; see you soon. &copy; Example Shop</p>
</body>
</html>
`

// corpusText is corpusHTML as a text body.
const corpusText = `Hello {{name}},

Here is what happened in your account this week. Three orders were shipped,
one is waiting for payment, and your loyalty balance grew by 120 points.

* Order 1001: shipped on Monday
* Order 1002: shipped on Wednesday
* Order 1003: waiting for payment

You can see every order and its tracking details in your order history
(https://shop.example.com/orders).

Item           Price
Walking boots  89.00 EUR
Wool socks     12.50 EUR

Thanks for shopping with us & see you soon. (c) Example Shop
`

// deliverabilityCorpus returns the calls whose every message the
// deliverability oracles check: the workload, html only, text only,
// attachments, inline images, one-click unsubscribe headers, and
// non-ASCII names and subject with a Reply-To.
func deliverabilityCorpus(t testing.TB) []corpusCall {
	t.Helper()
	base := func(html, text string) *postroom.Call {
		return &postroom.Call{
			Key: "k", AccountID: "acct",
			Message: postroom.Message{
				FromName: "Example Shop", FromEmail: "news@shop.example.com",
				Subject: "Your weekly summary, {{name}}",
				HTML:    html, Text: text,
			},
			Recipients: []postroom.Recipient{
				{Email: "ann@example.net", Name: "Ann Smith", Params: map[string]any{"name": "Ann", "id": "a1"}},
				{Email: "bob@example.org", Name: "Bob Jones", Params: map[string]any{"name": "Bob", "id": "b2"}},
			},
		}
	}
	w := fixture.Shared(t)
	htmlOnly := base(corpusHTML, "")
	textOnly := base("", corpusText)
	attach := base(corpusHTML, corpusText)
	attach.Message.Attachments = []postroom.Attachment{{Name: "invoice.pdf", ContentType: "application/pdf", Content: base64.StdEncoding.EncodeToString([]byte("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n"))}}
	images := base(strings.Replace(corpusHTML, "<h1>", `<p><img src="cid:logo@shop" alt="Example Shop" width="120" height="40"></p>`+"\n<h1>", 1), "")
	images.Message.Images = []postroom.Image{{Name: "logo.png", CID: "logo@shop", ContentType: "image/png", Content: pngPixel}}
	unsub := base(corpusHTML, "")
	unsub.Message.Headers = []postroom.Header{
		{Name: "List-Unsubscribe", Value: "<https://shop.example.com/unsubscribe/{{id}}>, <mailto:unsubscribe@shop.example.com?subject={{id}}>"},
		{Name: "List-Unsubscribe-Post", Value: "List-Unsubscribe=One-Click"},
	}
	intl := base(corpusHTML, corpusText)
	intl.Message.FromName = "Boutique Élégance"
	intl.Message.Subject = "Votre résumé de la semaine, {{name}} ✓"
	intl.Message.ReplyToName, intl.Message.ReplyToEmail = "Service clients", "help@shop.example.com"
	intl.Recipients[0].Name = "Anaïs Müller"
	return []corpusCall{
		{"workload", w.Call(3)},
		{"html-only", htmlOnly},
		{"text-only", textOnly},
		{"attachments", attach},
		{"inline-images", images},
		{"unsubscribe", unsub},
		{"international", intl},
	}
}

// corpusMessage is one message of the corpus as handed to the transport.
type corpusMessage struct {
	name string // call name and recipient index
	env  postroom.Envelope
}

// sendCorpus sends every call of the corpus through a Mailer with opts and
// returns the messages, in the order of the calls and their recipients. It
// fails the test unless every recipient was sent.
func sendCorpus(t *testing.T, opts postroom.Options) []corpusMessage {
	t.Helper()
	var mu sync.Mutex
	got := map[string]postroom.Envelope{}
	m := newMailer(t, postroom.TransportFunc(func(_ context.Context, env *postroom.Envelope) error {
		mu.Lock()
		defer mu.Unlock()
		e := *env
		e.To = append([]string(nil), env.To...)
		e.Data = bytes.Clone(env.Data)
		got[env.SendID] = e
		return nil
	}), opts)
	var out []corpusMessage
	for _, c := range deliverabilityCorpus(t) {
		results, err := m.Send(t.Context(), c.call)
		if err != nil {
			t.Fatalf("%s: Send: %v", c.name, err)
		}
		for i, r := range results {
			if r.Status != postroom.StatusSent {
				t.Fatalf("%s: recipient %d: %s %s", c.name, i, r.Status, r.Reason)
			}
			out = append(out, corpusMessage{name: c.name + "-" + string(rune('0'+i)), env: got[r.SendID]})
		}
	}
	return out
}

// forgedFields are the header fields TestDKIMOversigned adds on top of a
// signed message, with the value an attacker on the path might give each.
// guarded fields must break the signatures whether or not the message
// has one; the others only when it has one (a mailing list adds List-*
// fields of its own to a message that has none).
var forgedFields = []struct {
	name, value string
	guarded     bool
}{
	{"From", "Mallory <mallory@evil.example>", true},
	{"Reply-To", "mallory@evil.example", true},
	{"To", "victim@evil.example", true},
	{"Cc", "victim@evil.example", true},
	{"Subject", "Urgent: confirm your password", true},
	{"Date", "Mon, 01 Jan 2024 00:00:00 +0000", true},
	{"Message-ID", "<forged@evil.example>", true},
	{"MIME-Version", "1.0", true},
	{"Content-Type", "text/plain; charset=us-ascii", true},
	{"Content-Transfer-Encoding", "base64", true},
	{"List-Unsubscribe", "<https://evil.example/unsubscribe>", false},
	{"List-Unsubscribe-Post", "List-Unsubscribe=One-Click", false},
	{"In-Reply-To", "<forged@evil.example>", false},
	{"References", "<forged@evil.example>", false},
}

// headerCounts returns how many fields of each name (lower case) the
// header of msg has.
func headerCounts(msg []byte) map[string]int {
	head, _, _ := bytes.Cut(msg, []byte("\r\n\r\n"))
	counts := map[string]int{}
	for line := range strings.SplitSeq(string(head), "\r\n") {
		if line == "" || line[0] == ' ' || line[0] == '\t' {
			continue
		}
		name, _, _ := strings.Cut(line, ":")
		counts[strings.ToLower(strings.TrimSpace(name))]++
	}
	return counts
}

// oversignCorpus is the deliverability corpus's first message of each
// call, and a message whose custom headers are the threading fields.
func oversignCorpus(t *testing.T, signers []postroom.DKIMSigner) map[string][]byte {
	t.Helper()
	msgs := map[string][]byte{}
	for _, m := range sendCorpus(t, postroom.Options{DKIM: signers}) {
		if strings.HasSuffix(m.name, "-0") {
			msgs[m.name] = m.env.Data
		}
	}
	call := smallCall("ann@example.net")
	call.Message.Headers = []postroom.Header{
		{Name: "In-Reply-To", Value: "<order-1001@shop.example.com>"},
		{Name: "References", Value: "<order-1000@shop.example.com> <order-1001@shop.example.com>"},
	}
	m := newMailer(t, postroom.TransportFunc(func(_ context.Context, env *postroom.Envelope) error {
		msgs["threaded"] = bytes.Clone(env.Data)
		return nil
	}), postroom.Options{DKIM: signers})
	if _, err := m.Send(t.Context(), call); err != nil {
		t.Fatal(err)
	}
	return msgs
}

// TestDKIMOversigned adds on top of each signed message, one at a time, a
// field the signatures cover (a second Subject that some mail readers
// show instead of the signed one, a Reply-To that takes the replies
// away) and checks that neither dkimpy nor go-msgauth, verifiers
// independent of the signer, accepts either signature (RFC 6376 §5.4.2,
// §8.15). A Received field added as a relay adds it must still verify,
// as must the message unchanged.
func TestDKIMOversigned(t *testing.T) {
	signers, records := testSigners(t)
	msgs := map[string][]byte{}
	want := map[string]bool{}
	for name, data := range oversignCorpus(t, signers) {
		msgs[name], want[name] = data, true
		relayed := "Received: from relay.example.net by mx.example.org; Mon, 23 Nov 2026 12:00:00 +0000\r\n"
		msgs[name+"+Received"], want[name+"+Received"] = append([]byte(relayed), data...), true
		counts := headerCounts(data)
		for _, f := range forgedFields {
			if !f.guarded && counts[strings.ToLower(f.name)] == 0 {
				continue
			}
			forged := name + "+" + f.name
			msgs[forged] = append([]byte(f.name+": "+f.value+"\r\n"), data...)
			want[forged] = false
		}
	}
	py := verifyDKIMPy(t, records, msgs)
	for name, data := range msgs {
		gv := verifyDKIMGo(t, records, data)
		for i := range signers {
			if len(py[name]) != len(signers) || py[name][i] != want[name] {
				t.Errorf("%s: dkimpy verified %v, want %v for each signature", name, py[name], want[name])
				break
			}
		}
		for i := range signers {
			if len(gv) != len(signers) || gv[i] != want[name] {
				t.Errorf("%s: go-msgauth verified %v, want %v for each signature", name, gv, want[name])
				break
			}
		}
	}
}

// TestDKIMSignsEachFieldOnceMore checks the h= list of every message of
// the corpus against its header: each name in h= is listed more times
// than the message has fields of that name (oversigned), and each field
// of forgedFields the message has is in h=.
func TestDKIMSignsEachFieldOnceMore(t *testing.T) {
	signers, _ := testSigners(t)
	for name, data := range oversignCorpus(t, signers) {
		_, msg := cutDKIMFields(data)
		counts := headerCounts(msg)
		for i, h := range signedHeaders(t, data) {
			listed := map[string]int{}
			for _, k := range h {
				listed[strings.ToLower(k)]++
			}
			for k, n := range listed {
				if n <= counts[k] {
					t.Errorf("%s: signature %d lists %s %d times, the message has %d", name, i, k, n, counts[k])
				}
			}
			for _, f := range forgedFields {
				if k := strings.ToLower(f.name); counts[k] > 0 && listed[k] == 0 {
					t.Errorf("%s: signature %d does not cover %s", name, i, f.name)
				}
			}
		}
	}
}

// spamStatus finds each X-Spam-Status field; unfoldSA joins its lines,
// which SpamAssassin folds after a comma of the tests list; messageID
// finds the next Message-ID field.
var (
	spamStatus = regexp.MustCompile(`(?m)^X-Spam-Status: .*(?:\n[ \t].*)*`)
	unfoldSA   = regexp.MustCompile(`,\r?\n[ \t]+`)
	messageID  = regexp.MustCompile(`(?m)^Message-ID:\s*(<[^>]*>)`)
)

// structuralRules are the SpamAssassin rules about a message's structure
// and headers, which no message postroom builds may fire, whatever its
// content. docs/DKIM.md lists them.
var structuralRules = []string{
	"MIME_HTML_ONLY", "MIME_HTML_MOSTLY", "MIME_HTML_ONLY_MULTI", "HTML_MIME_NO_HTML_TAG",
	"MPART_ALT_DIFF", "MPART_ALT_DIFF_COUNT", "MIME_QP_LONG_LINE", "MIME_BASE64_TEXT",
	"MIME_BASE64_BLANKS", "MIME_BOUND_DIGITS_15", "MIME_HEADER_CTYPE_ONLY", "MIME_NO_TEXT",
	"MIME_CHARSET_FARAWAY", "MISSING_MIME_HB_SEP", "MISSING_MID", "MISSING_DATE",
	"MISSING_HEADERS", "MISSING_FROM", "MISSING_SUBJECT", "INVALID_DATE", "INVALID_MSGID",
	"DATE_IN_FUTURE_03_06", "DATE_IN_FUTURE_06_12", "DATE_IN_FUTURE_12_24", "DATE_IN_FUTURE_24_48",
	"DATE_IN_FUTURE_48_96", "DATE_IN_FUTURE_96_Q", "DATE_IN_PAST_03_06", "DATE_IN_PAST_06_12",
	"DATE_IN_PAST_12_24", "DATE_IN_PAST_24_48", "DATE_IN_PAST_96_XX", "FROM_EXCESS_BASE64",
	"FROM_ADDR_WS", "SUBJ_ILLEGAL_CHARS", "BASE64_LENGTH_78_79", "BASE64_LENGTH_79_INF",
	"TO_NO_BRKTS_HTML_ONLY", "TO_NO_BRKTS_MSFT", "TO_MALFORMED", "HEADER_SPAM",
	"MSGID_SHORT", "MSGID_NOFQDN1", "MSGID_MULTIPLE_AT", "MALFORMED_FREEMAIL",
}

// TestSpamAssassinStructural scores every message of the deliverability
// corpus, unsigned and DKIM-signed, with SpamAssassin's local rules (no
// network tests) and fails if any structural rule fires.
func TestSpamAssassinStructural(t *testing.T) {
	if testing.Short() {
		t.Skip("runs SpamAssassin over the whole corpus")
	}
	// Its time goes to programs it runs: it waits beside the package's
	// other tests that run programs.
	t.Parallel()
	testenv.Need(t, "spamassassin", "/usr/bin/spamassassin", "-V")
	signers, _ := testSigners(t)
	msgs := sendCorpus(t, postroom.Options{})
	for _, m := range sendCorpus(t, postroom.Options{DKIM: signers}) {
		m.name += "-signed"
		msgs = append(msgs, m)
	}
	// One mbox, one spamassassin run: its start-up (compiling the rules)
	// is most of its time.
	var box bytes.Buffer
	for _, m := range msgs {
		box.WriteString("From MAILER-DAEMON Mon Nov 23 10:00:00 2026\n")
		for line := range strings.Lines(string(m.env.Data)) {
			if strings.HasPrefix(line, "From ") {
				box.WriteByte('>') // mboxrd quoting
			}
			box.WriteString(line)
		}
		box.WriteString("\n")
	}
	home := t.TempDir()
	path := filepath.Join(home, "corpus.mbox")
	if err := os.WriteFile(path, box.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), "/usr/bin/spamassassin", "-L", "-t", "--mbox", path)
	cmd.Env = append(os.Environ(), "HOME="+home)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("spamassassin: %v", err)
	}
	// Each message's X-Spam-Status comes before its own header fields:
	// the Message-ID after it says whose it is.
	names := map[string]string{}
	for _, m := range msgs {
		names[postroomtest.Parse(t, m.env.Data).Header.Get("Message-ID")] = m.name
	}
	text := string(out)
	locs := spamStatus.FindAllStringIndex(text, -1)
	if len(locs) != len(msgs) {
		t.Fatalf("spamassassin scored %d messages, want %d", len(locs), len(msgs))
	}
	seen := map[string]bool{}
	for _, loc := range locs {
		st := unfoldSA.ReplaceAllString(text[loc[0]:loc[1]], ",")
		st = strings.Join(strings.Fields(st), " ")
		_, tests, _ := strings.Cut(st, "tests=")
		tests, _, _ = strings.Cut(tests, " ")
		id := messageID.FindStringSubmatch(text[loc[1]:])
		if id == nil || names[id[1]] == "" {
			t.Fatalf("no known Message-ID after %q", st)
		}
		name := names[id[1]]
		seen[name] = true
		t.Logf("%s: %s", name, tests)
		for r := range strings.SplitSeq(tests, ",") {
			if slices.Contains(structuralRules, r) {
				t.Errorf("%s: structural rule %s fired (all: %s)", name, r, tests)
			}
		}
	}
	if len(seen) != len(msgs) {
		t.Errorf("spamassassin scored %d of the %d messages", len(seen), len(msgs))
	}
}
