package benchmarks

import (
	"fmt"
	"testing"

	"github.com/postroom/postroom/internal/bench"
	"github.com/postroom/postroom/internal/fixture"
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

func BenchmarkMemmove(b *testing.B) {
	bench.Memmove(b, fixture.Shared(b))
}

// BenchmarkDKIMFloor is the floor of PipelineDKIM: the SHA-256 and a copy
// of each message, on as many goroutines as the pipeline has cores.
func BenchmarkDKIMFloor(b *testing.B) {
	bench.DKIMFloor(b, fixture.Shared(b))
}

// BenchmarkOneRecipient is a one-recipient call through Send, with the
// Mailer's compiled-template cache warm and with it off (every call
// compiles). The goals are stated for one core: run it with -cpu 1.
func BenchmarkOneRecipient(b *testing.B) {
	w := fixture.Shared(b)
	b.Run("cold", func(b *testing.B) { bench.OneRecipient(b, w, false) })
	b.Run("warm", func(b *testing.B) { bench.OneRecipient(b, w, true) })
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
