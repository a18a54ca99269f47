package bench

import (
	"bytes"
	"context"
	"testing"

	"github.com/k3a/html2text"
	"github.com/postroom/postroom"
	"github.com/postroom/postroom/internal/htmltext"
	"github.com/postroom/postroom/internal/testkit/fixture"
	"github.com/postroom/postroom/postroomtest"
)

// The bodies of the generated text part's benchmarks: a call that gives
// html and no text, so that every recipient's text/plain alternative is
// made from its rendered html, through postroom's Mailer (internal/htmltext)
// and the obvious way (Obvious, with k3a/html2text); and the conversion of
// one rendered html alone, by each.

// HTMLOnlyCall returns Call(n) without its text part: the call that gets a
// generated one.
func HTMLOnlyCall(w *fixture.Workload, n int) *postroom.Call {
	call := w.Call(n)
	call.Message.Text = ""
	return call
}

// PipelineHTMLOnlyPostroom is PipelinePostroom on HTMLOnlyCall(n). It
// fails unless postroom's message for that call has a text part.
func PipelineHTMLOnlyPostroom(b *testing.B, w *fixture.Workload, n int) {
	checkTextPart(b, func(ctx context.Context, t postroom.Transport) error {
		m, err := NewMailer(t, 1)
		if err != nil {
			return err
		}
		return SendAll(ctx, m, HTMLOnlyCall(w, 1))
	})
	pipelineCall(b, w, HTMLOnlyCall(w, n), postroom.Options{})
}

// PipelineHTMLOnlyObvious is PipelineObvious on HTMLOnlyCall(n): the text
// part of each message is k3a/html2text's HTML2Text of the rendered html.
// It fails unless the obvious way's message for that call has a text part.
func PipelineHTMLOnlyObvious(b *testing.B, w *fixture.Workload, n int) {
	checkTextPart(b, func(ctx context.Context, t postroom.Transport) error {
		return (&Obvious{Transport: t}).Send(ctx, fixture.PlainCall(HTMLOnlyCall(w, 1)))
	})
	obviousPipeline(b, w, fixture.PlainCall(HTMLOnlyCall(w, n)), &Obvious{})
}

// checkTextPart fails b unless send hands t one message, with a text/plain
// part that is not empty: the html-only benchmarks measure that part.
func checkTextPart(b *testing.B, send func(context.Context, postroom.Transport) error) {
	b.Helper()
	var msgs [][]byte
	if err := send(b.Context(), postroom.TransportFunc(func(_ context.Context, e *postroom.Envelope) error {
		msgs = append(msgs, bytes.Clone(e.Data))
		return nil
	})); err != nil {
		b.Fatal(err)
	}
	if len(msgs) != 1 {
		b.Fatalf("%d messages, want 1", len(msgs))
	}
	if text := postroomtest.Parse(b, msgs[0]).Leaf(b, "text/plain"); len(bytes.TrimSpace(text.Body)) == 0 {
		b.Fatal("the generated text part is empty")
	}
}

// renderedHTML returns the workload's html as rendered for each sample.
func renderedHTML(b *testing.B, w *fixture.Workload) [][]byte {
	b.Helper()
	docs := make([][]byte, w.Samples())
	for i := range docs {
		p, err := w.Rendered(i)
		if err != nil {
			b.Fatal(err)
		}
		docs[i] = []byte(p.HTML)
	}
	return docs
}

// TextPartPostroom measures postroom's text part alone: one
// htmltext.Converter, as one of the Mailer's workers keeps, converting the
// rendered html of the samples in turn into a reused buffer. Besides ns/op
// it reports cpu-ns/op, the process's CPU time per conversion; MB/s counts
// the html's bytes.
func TextPartPostroom(b *testing.B, w *fixture.Workload) {
	docs := renderedHTML(b, w)
	var c htmltext.Converter
	var out []byte
	textPart(b, docs, func(doc []byte) int {
		out = c.Append(out[:0], doc)
		return len(out)
	})
}

// TextPartHTML2Text measures the obvious way's text part alone: k3a/html2text's
// HTML2Text of the rendered html of the samples in turn, as Obvious calls
// it, with the same figures as TextPartPostroom.
func TextPartHTML2Text(b *testing.B, w *fixture.Workload) {
	docs := renderedHTML(b, w)
	strs := make([]string, len(docs))
	for i, d := range docs {
		strs[i] = string(d)
	}
	i := 0
	textPart(b, docs, func([]byte) int {
		s := html2text.HTML2Text(strs[i%len(strs)])
		i++
		return len(s)
	})
}

// textPart runs convert on docs in turn and reports the figures; convert
// returns the length of the text it made, which must not be 0.
func textPart(b *testing.B, docs [][]byte, convert func([]byte) int) {
	size := 0
	for _, d := range docs {
		size += len(d)
	}
	b.SetBytes(int64(size / len(docs)))
	b.ReportAllocs()
	i := 0
	cpu := startCPU()
	for b.Loop() {
		if convert(docs[i%len(docs)]) == 0 {
			b.Fatal("no text")
		}
		i++
	}
	cpu.stop(b, 1, "cpu-ns/op")
}
