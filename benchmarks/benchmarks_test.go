package benchmarks

import (
	"fmt"
	"testing"

	"github.com/postroom/postroom/internal/testkit/bench"
	"github.com/postroom/postroom/internal/testkit/fixture"
)

// pipelineSizes are the call sizes of BenchmarkPipeline.
var pipelineSizes = []int{1000, 25000}

func BenchmarkRender(b *testing.B) {
	w := fixture.Shared(b)
	b.Run("raymond", func(b *testing.B) { bench.RenderRaymond(b, w) })
	b.Run("postroom", func(b *testing.B) { bench.RenderPostroom(b, w) })
}

func BenchmarkMIME(b *testing.B) {
	w := fixture.Shared(b)
	b.Run("gomail", func(b *testing.B) { bench.MIMEGoMail(b, w) })
	b.Run("postroom", func(b *testing.B) { bench.MIMEPostroom(b, w) })
	b.Run("skeleton", func(b *testing.B) { bench.MIMESkeleton(b, w) })
}

func BenchmarkPipeline(b *testing.B) {
	w := fixture.Shared(b)
	for _, side := range []struct {
		name string
		run  func(*testing.B, *fixture.Workload, int)
	}{{"obvious", bench.PipelineObvious}, {"postroom", bench.PipelinePostroom}} {
		b.Run(side.name, func(b *testing.B) {
			for _, n := range pipelineSizes {
				b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) { side.run(b, w, n) })
			}
		})
	}
}

// BenchmarkPipelineDKIM is the postroom pipeline of the largest call size
// unsigned and DKIM-signed with each key kind.
func BenchmarkPipelineDKIM(b *testing.B) {
	w := fixture.Shared(b)
	n := pipelineSizes[len(pipelineSizes)-1]
	for _, kind := range bench.DKIMKeys {
		name := kind
		if name == "" {
			name = "unsigned"
		}
		b.Run(fmt.Sprintf("%s/N=%d", name, n), func(b *testing.B) { bench.PipelineDKIM(b, w, n, kind) })
	}
}

// BenchmarkPipelineObviousDKIM is the obvious pipeline of the largest call
// size with every message signed by go-msgauth's dkim.Sign with each key
// kind: BenchmarkPipelineDKIM's comparison.
func BenchmarkPipelineObviousDKIM(b *testing.B) {
	w := fixture.Shared(b)
	n := pipelineSizes[len(pipelineSizes)-1]
	for _, kind := range bench.DKIMKeys[1:] {
		b.Run(fmt.Sprintf("%s/N=%d", kind, n), func(b *testing.B) { bench.PipelineObviousDKIM(b, w, n, kind) })
	}
}

func BenchmarkMemmove(b *testing.B) {
	bench.Memmove(b, fixture.Shared(b))
}

// BenchmarkDKIMFloor is the floor of PipelineDKIM: the SHA-256 and a copy
// of each message, on as many goroutines as the pipeline has cores.
func BenchmarkDKIMFloor(b *testing.B) {
	bench.DKIMFloor(b, fixture.Shared(b))
}

// BenchmarkOneRecipient is a one-recipient call: the obvious way (raymond
// + go-mail) parsing the templates in every call and parsing them once,
// and postroom's Send with the Mailer's compiled-template cache off (cold:
// every call compiles), warm, and warm with each call's files in strings
// of their own (bench.OneRecipientFresh). The goals are stated for
// GOMAXPROCS 1 and 2: run it with -cpu 1,2.
func BenchmarkOneRecipient(b *testing.B) {
	w := fixture.Shared(b)
	b.Run("obvious", func(b *testing.B) { bench.OneRecipientObvious(b, w, false) })
	b.Run("obvious-parsed-once", func(b *testing.B) { bench.OneRecipientObvious(b, w, true) })
	b.Run("cold", func(b *testing.B) { bench.OneRecipient(b, w, false) })
	b.Run("warm", func(b *testing.B) { bench.OneRecipient(b, w, true) })
	b.Run("warm-fresh-files", func(b *testing.B) { bench.OneRecipientFresh(b, w) })
}

// BenchmarkCompile compiles the workload's html (about 8 KB) and a 512 KiB
// template with postroom, against raymond's parse of the same source.
func BenchmarkCompile(b *testing.B) {
	w := fixture.Shared(b)
	for _, src := range []struct{ name, src string }{
		{"html", w.Base.Message.HTML},
		{"512KiB", bench.BigTemplate(w)},
	} {
		b.Run(src.name+"/raymond", func(b *testing.B) { bench.ParseRaymond(b, src.src) })
		b.Run(src.name+"/postroom", func(b *testing.B) { bench.CompilePostroom(b, src.src) })
	}
}
