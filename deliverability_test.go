package postroom_test

// The messages the deliverability oracles check (the DKIM verifier in
// dkim_test.go, SpamAssassin in textpart_test.go), and the way those
// programs are found.

import (
	"bytes"
	"context"
	"encoding/base64"
	"strings"
	"sync"
	"testing"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/fixture"
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
