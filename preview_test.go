package postroom_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/testkit/fixture"
	"github.com/postroom/postroom/postroomtest"
	"github.com/postroom/postroom/templatestore"
	"github.com/postroom/postroom/transport"
)

// refuseTransport fails the test if anything is handed to it.
func refuseTransport(t *testing.T) postroom.Transport {
	return postroom.TransportFunc(func(context.Context, *postroom.Envelope) error {
		t.Error("Preview called the transport")
		return errors.New("not allowed")
	})
}

// previewCall is the shared workload with 6 recipients: 1 lacks
// first_name, 3 has no valid address, 4 repeats 0's address.
func previewCall(t *testing.T) *postroom.Call {
	t.Helper()
	call := fixture.Shared(t).Call(6)
	p := maps.Clone(call.Recipients[1].Params)
	delete(p, "first_name")
	call.Recipients[1].Params = p
	call.Recipients[3].Email = "not-an-address"
	call.Recipients[4].Email = call.Recipients[0].Email
	return call
}

// TestPreviewMatchesRun is the oracle: with the same Options.Rand and
// Options.Now, each previewed recipient's Result is the one Run returns
// and its message is byte for byte what Run hands the transport; Preview
// itself hands nothing over. The deliverability case signs with DKIM,
// sets VERP, adds a bcc and drops the text, so that the text part is
// generated; the previewed envelope is the one handed over.
func TestPreviewMatchesRun(t *testing.T) {
	signers, _ := testSigners(t)
	tests := []struct {
		name     string
		opts     postroom.Options
		htmlOnly bool // the call has no text: the text part is generated
		made     int  // messages made
	}{
		{name: "lenient", made: 4},
		{name: "strict", opts: postroom.Options{StrictParams: true}, made: 3},
		{name: "deliverability", opts: postroom.Options{DKIM: signers, VERP: postroom.VERP{Domain: "bounce.example.com"}}, htmlOnly: true, made: 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			now := func() time.Time { return time.Date(2024, 3, 5, 10, 20, 30, 0, time.UTC) }
			call := previewCall(t)
			if tt.htmlOnly {
				call.Message.Text = ""
				call.Message.BCC = "audit@example.com"
			}
			opts := func() postroom.Options {
				o := tt.opts
				o.Rand, o.Now = &fixedRand{}, now
				return o
			}
			var log bytes.Buffer
			popts := opts()
			popts.Logger = slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelInfo}))
			p, err := newMailer(t, refuseTransport(t), popts).Preview(t.Context(), postroom.OpSend, call, postroom.PreviewOptions{Message: true})
			if err != nil {
				t.Fatal(err)
			}
			if log.Len() > 0 {
				t.Errorf("Preview logged at info level or above:\n%s", log.String())
			}
			mem := transport.NewMemory()
			results, err := newMailer(t, mem, opts()).Send(t.Context(), call)
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Recipients) != len(results) {
				t.Fatalf("%d previews for %d results", len(p.Recipients), len(results))
			}
			made := 0
			for i, r := range results {
				pr := p.Recipients[i]
				if pr.Index != i || pr.Result.Status != r.Status || pr.Result.Code != r.Code || pr.Result.Reason != r.Reason || pr.Result.SendID != r.SendID {
					t.Errorf("recipient %d: preview %+v, run %+v", i, pr.Result, r)
				}
				env, sent := mem.Envelope(r.SendID)
				if sent != (pr.Message != nil) {
					t.Fatalf("recipient %d: sent %v, preview has a message %v", i, sent, pr.Message != nil)
				}
				if !sent {
					continue
				}
				made++
				if !bytes.Equal(env.Data, pr.Message) {
					t.Errorf("recipient %d: the previewed message differs from the one sent:\npreview:\n%.600s\nsent:\n%.600s", i, pr.Message, env.Data)
				}
				if pr.EnvelopeFrom != env.From || !slices.Equal(pr.EnvelopeTo, env.To) {
					t.Errorf("recipient %d: previewed envelope %q -> %q, sent %q -> %q", i, pr.EnvelopeFrom, pr.EnvelopeTo, env.From, env.To)
				}
				if tt.htmlOnly && !slices.Contains(pr.EnvelopeTo, "audit@example.com") {
					t.Errorf("recipient %d: the bcc is not in the previewed envelope %q", i, pr.EnvelopeTo)
				}
				if signed := bytes.HasPrefix(env.Data, []byte("DKIM-Signature:")); signed != (tt.opts.DKIM != nil) {
					t.Errorf("recipient %d: signed %v, want %v", i, signed, tt.opts.DKIM != nil)
				}
				if tt.htmlOnly && len(postroomtest.Parse(t, env.Data).Leaf(t, "text/plain").Body) == 0 {
					t.Errorf("recipient %d: the generated text part is empty", i)
				}
				if tt.opts.VERP.Domain != "" && env.From != tt.opts.VERP.Address(r.SendID) {
					t.Errorf("recipient %d: envelope sender %q", i, env.From)
				}
			}
			if made != tt.made {
				t.Errorf("%d messages made, want %d", made, tt.made)
			}
		})
	}
}

// TestPreviewRecipient checks one recipient's parts, headers and missing
// params against the message parsed back.
func TestPreviewRecipient(t *testing.T) {
	call := previewCall(t)
	call.Message.Subject = "Ünïcode order {{order_id}} for {{first_name}}"
	m := newMailer(t, refuseTransport(t), postroom.Options{})
	p, err := m.Preview(t.Context(), postroom.OpSend, call, postroom.PreviewOptions{Recipients: []int{1, 0}, Message: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Recipients) != 2 || p.Recipients[0].Index != 1 || p.Recipients[1].Index != 0 {
		t.Fatalf("recipients %+v, want indices 1 then 0", p.Recipients)
	}
	for _, pr := range p.Recipients {
		if pr.Result.Status != postroom.StatusSent || !sendIDPattern.MatchString(pr.Result.SendID) {
			t.Errorf("recipient %d: result %+v, want sent with a send id", pr.Index, pr.Result)
		}
		msg := postroomtest.Parse(t, pr.Message)
		if got := msg.HeaderValue("Subject"); got != pr.Subject {
			t.Errorf("recipient %d: Subject header %q, rendered subject %q", pr.Index, got, pr.Subject)
		}
		fields := map[string]string{}
		for _, h := range pr.Headers {
			fields[h.Name] = h.Value
		}
		for _, name := range []string{"Subject", "To", "From", "Message-ID", "X-Campaign-ID"} {
			if want := msg.HeaderValue(name); fields[name] != want {
				t.Errorf("recipient %d: header %s = %q, the message has %q", pr.Index, name, fields[name], want)
			}
		}
		lf := func(s string) string { return strings.ReplaceAll(s, "\r\n", "\n") }
		for _, part := range msg.Parts {
			body := lf(string(part.Body))
			if (part.Type() == "text/html" && body != lf(pr.HTML)) || (part.Type() == "text/plain" && body != lf(pr.Text)) {
				t.Errorf("recipient %d: the rendered %s differs from the message's", pr.Index, part.Type())
			}
		}
	}
	if got := p.Recipients[0]; !slices.Equal(got.Missing, []string{"first_name"}) || got.Subject != "Ünïcode order "+call.Recipients[1].Params["order_id"].(string)+" for " {
		t.Errorf("recipient 1: missing %q, subject %q", got.Missing, got.Subject)
	}
	if got := p.Recipients[1]; got.Missing != nil {
		t.Errorf("recipient 0: missing %q, want none", got.Missing)
	}
	p, err = m.Preview(t.Context(), postroom.OpSend, call, postroom.PreviewOptions{Recipients: []int{0}})
	if err != nil {
		t.Fatal(err)
	}
	if p.Recipients[0].Message != nil || p.Recipients[0].Headers == nil {
		t.Errorf("without PreviewOptions.Message: message %d bytes, %d headers", len(p.Recipients[0].Message), len(p.Recipients[0].Headers))
	}
}

// TestPreviewInvalid checks the invalid recipients: refused before
// rendering (no parts), or made invalid by their render under
// StrictParams (parts and missing params kept).
func TestPreviewInvalid(t *testing.T) {
	call := previewCall(t)
	m := newMailer(t, refuseTransport(t), postroom.Options{StrictParams: true})
	p, err := m.Preview(t.Context(), postroom.OpSend, call, postroom.PreviewOptions{Recipients: []int{1, 3, 4}})
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range []postroom.ReasonCode{postroom.ReasonMissingParam, postroom.ReasonInvalidEmail, postroom.ReasonDuplicate} {
		if r := p.Recipients[k].Result; r.Status != postroom.StatusInvalid || r.Code != want || r.SendID != "" {
			t.Errorf("recipient %d: %+v, want invalid %s", p.Recipients[k].Index, r, want)
		}
		if p.Recipients[k].Headers != nil {
			t.Errorf("recipient %d: headers of a message that would not be made", p.Recipients[k].Index)
		}
	}
	if r := p.Recipients[0]; !slices.Equal(r.Missing, []string{"first_name"}) || r.Subject == "" {
		t.Errorf("strict missing param: missing %q, subject %q", r.Missing, r.Subject)
	}
	if r := p.Recipients[1]; r.Subject != "" || r.HTML != "" {
		t.Errorf("an address refused before rendering has parts: %+v", r)
	}
}

// TestPreviewParts checks the referenced params of each part.
func TestPreviewParts(t *testing.T) {
	call := previewCall(t)
	call.Message.Headers = append(slices.Clone(call.Message.Headers), postroom.Header{Name: "X-Order", Value: "{{order_id}}-{{region}}"})
	p, err := newMailer(t, refuseTransport(t), postroom.Options{}).Preview(t.Context(), postroom.OpSend, call, postroom.PreviewOptions{Recipients: []int{0}})
	if err != nil {
		t.Fatal(err)
	}
	parts := map[string][]string{}
	var fields []string
	for _, pp := range p.Parts {
		parts[pp.Field] = pp.Params
		fields = append(fields, pp.Field)
	}
	wantFields := []string{"message.subject", "message.html", "message.text", "message.headers[0].value", "message.headers[1].value", "message.headers[2].value", "message.headers[3].value"}
	if !slices.Equal(fields, wantFields) {
		t.Fatalf("parts %q, want %q", fields, wantFields)
	}
	if got := parts["message.subject"]; !slices.Equal(got, []string{"first_name", "order_id"}) {
		t.Errorf("subject params %q", got)
	}
	if got := parts["message.headers[0].value"]; got != nil {
		t.Errorf("a static header references %q", got)
	}
	if got := parts["message.headers[3].value"]; !slices.Equal(got, []string{"order_id", "region"}) {
		t.Errorf("header params %q", got)
	}
	html := parts["message.html"]
	for _, want := range []string{"first_name", "items", "items.name", "company_name"} {
		if !slices.Contains(html, want) {
			t.Errorf("html params %q lack %q", html, want)
		}
	}
	// region is referenced and absent for every recipient.
	if got := p.Recipients[0].Missing; !slices.Equal(got, []string{"region"}) {
		t.Errorf("missing %q, want region", got)
	}
}

// TestPreviewStored checks message.send_template: the stored bodies are
// rendered and their parts named by the template id fields.
func TestPreviewStored(t *testing.T) {
	store := templatestore.NewDir(fstest.MapFS{
		"acct/welcome": {Data: []byte("<p>Welcome {{name}}</p>")},
	})
	m := newMailer(t, refuseTransport(t), postroom.Options{Templates: store})
	call := smallCall("a@example.com")
	call.Message.HTML, call.Message.Text = "", ""
	call.Message.HTMLTemplateID = "welcome"
	p, err := m.Preview(t.Context(), postroom.OpSendTemplate, call, postroom.PreviewOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Recipients[0].HTML; got != "<p>Welcome Ann</p>" {
		t.Errorf("html %q", got)
	}
	if len(p.Parts) != 2 || p.Parts[1].Field != "message.html_template_id" || !slices.Equal(p.Parts[1].Params, []string{"name"}) {
		t.Errorf("parts %+v", p.Parts)
	}
	call.Message.HTMLTemplateID = "nope"
	_, err = m.Preview(t.Context(), postroom.OpSendTemplate, call, postroom.PreviewOptions{})
	if !errors.Is(err, postroom.ErrTemplateNotFound) {
		t.Errorf("unknown template: %v, want ErrTemplateNotFound", err)
	}
}

// TestPreviewRefused checks that call-level refusals are Run's typed
// errors, and that a bad index or operation fails the preview.
func TestPreviewRefused(t *testing.T) {
	m := newMailer(t, refuseTransport(t), postroom.Options{Auth: postroom.StaticKeys{"acct": {"k"}}})
	bad := smallCall("a@example.com")
	bad.Key = "wrong"
	if _, err := m.Preview(t.Context(), postroom.OpSend, bad, postroom.PreviewOptions{}); !errors.Is(err, postroom.ErrUnauthorized) {
		t.Errorf("wrong key: %v", err)
	}
	if _, err := m.Preview(t.Context(), postroom.OpSend, smallCall(), postroom.PreviewOptions{}); !errors.Is(err, postroom.ErrNoRecipients) {
		t.Errorf("no recipients: %v", err)
	}
	syntax := smallCall("a@example.com")
	syntax.Message.HTML = "<p>{{#if x}}</p>"
	_, err := m.Preview(t.Context(), postroom.OpSend, syntax, postroom.PreviewOptions{})
	var ve *postroom.ValidationError
	if !errors.As(err, &ve) || ve.Field != "message.html" || !errors.Is(err, postroom.ErrTemplateSyntax) {
		t.Errorf("syntax error: %v", err)
	}
	_, err = m.Preview(t.Context(), postroom.OpSend, smallCall("a@example.com"), postroom.PreviewOptions{Recipients: []int{1}})
	if err == nil || errors.As(err, &ve) {
		t.Errorf("index out of range: %v, want an error that is not the call's", err)
	}
	if _, err := m.Preview(t.Context(), postroom.Operation(7), smallCall("a@example.com"), postroom.PreviewOptions{}); err == nil {
		t.Error("unknown operation accepted")
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := m.Preview(ctx, postroom.OpSend, smallCall("a@example.com"), postroom.PreviewOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled: %v", err)
	}
}

// queuedTransport is a Queuer that queues; it must never be called.
type queuedTransport struct{ postroom.Transport }

func (queuedTransport) Queued() bool { return true }

// TestPreviewQueued checks the status a queueing transport would give.
func TestPreviewQueued(t *testing.T) {
	m := newMailer(t, queuedTransport{refuseTransport(t)}, postroom.Options{})
	p, err := m.Preview(t.Context(), postroom.OpSend, smallCall("a@example.com"), postroom.PreviewOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Recipients[0].Result.Status; got != postroom.StatusQueued {
		t.Errorf("status %s, want queued", got)
	}
}

// BenchmarkPreview previews one recipient of the shared workload, and
// every recipient of a 100-recipient call, with their message bytes.
func BenchmarkPreview(b *testing.B) {
	m, err := postroom.New(postroom.TransportFunc(func(context.Context, *postroom.Envelope) error {
		b.Fatal("Preview called the transport")
		return nil
	}), postroom.Options{Auth: postroom.NoAuth{}})
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{1, 100} {
		call := fixture.Shared(b).Call(n)
		b.Run(fmt.Sprintf("recipients=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := m.Preview(b.Context(), postroom.OpSend, call, postroom.PreviewOptions{Message: true}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
