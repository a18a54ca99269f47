package benchmarks

import (
	"fmt"
	"testing"

	"github.com/postroom/postroom/internal/testkit/bench"
	"github.com/postroom/postroom/internal/testkit/fixture"
)

// BenchmarkPipelineHTMLOnly is the pipeline of the largest call size on the
// workload's call without its text part (bench.HTMLOnlyCall), the default
// for a call that gives html only: every recipient's text/plain
// alternative is generated from its rendered html, by postroom's Mailer
// (internal/htmltext) and by the obvious way (raymond + go-mail with
// k3a/html2text's HTML2Text). Set against BenchmarkPipeline's postroom row,
// the postroom side is the cost of the generated text part in the call.
// Besides ns/recipient both report cpu-ns/recipient, the process's CPU
// time (user and system, every thread) per recipient, which a busy machine
// inflates less than wall time.
func BenchmarkPipelineHTMLOnly(b *testing.B) {
	w := fixture.Shared(b)
	n := pipelineSizes[len(pipelineSizes)-1]
	b.Run(fmt.Sprintf("obvious/N=%d", n), func(b *testing.B) { bench.PipelineHTMLOnlyObvious(b, w, n) })
	b.Run(fmt.Sprintf("postroom/N=%d", n), func(b *testing.B) { bench.PipelineHTMLOnlyPostroom(b, w, n) })
}

// BenchmarkTextPart is the text part alone: the workload's html as rendered
// for its samples, converted one after the other on one goroutine by
// k3a/html2text's HTML2Text and by postroom's htmltext.Converter (reused,
// as each of the Mailer's workers keeps one). It reports cpu-ns/op, the
// CPU time per conversion; run it with -cpu 1.
func BenchmarkTextPart(b *testing.B) {
	w := fixture.Shared(b)
	b.Run("html2text", func(b *testing.B) { bench.TextPartHTML2Text(b, w) })
	b.Run("postroom", func(b *testing.B) { bench.TextPartPostroom(b, w) })
}
