package main

import (
	"fmt"
	"io"
	"runtime"
	"testing"

	"github.com/postroom/postroom/internal/testkit/bench"
)

// compilePath holds the compile-path measurements, all on one core
// (GOMAXPROCS 1): the compile of the workload's html and of a 512 KiB
// template against raymond's parse. The one-recipient calls, whose cost is
// mostly compiling when nothing is cached, are in onerecipient.go.
type compilePath struct {
	htmlRaymond, htmlPR   stats
	bigRaymond, bigPR     stats
	htmlBytes, bigBytes   int
	loadBefore, loadAfter string
}

// opStats reads a benchmark's figures per operation (not per recipient),
// with the process CPU time per operation when it was reported.
func opStats(res testing.BenchmarkResult) stats {
	s := fromResult(res)
	if !s.ok {
		return s
	}
	s.ns = float64(res.NsPerOp())
	s.allocs = float64(res.AllocsPerOp())
	s.bytes = float64(res.AllocedBytesPerOp())
	s.cpu = res.Extra["cpu-ns/op"]
	return s
}

// runCompilePath measures the compile path on one core.
func (r *report) runCompilePath() {
	w := r.w
	prev := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(prev)
	c := &r.compile
	c.loadBefore = loadAverage()
	big := bench.BigTemplate(w)
	c.htmlBytes, c.bigBytes = len(w.Base.Message.HTML), len(big)
	run := func(name string, f func(*testing.B)) stats {
		return r.benchWith(name, f, opStats)
	}
	c.htmlRaymond = run("compile/html/raymond", func(b *testing.B) { bench.ParseRaymond(b, w.Base.Message.HTML) })
	c.htmlPR = run("compile/html/postroom", func(b *testing.B) { bench.CompilePostroom(b, w.Base.Message.HTML) })
	c.bigRaymond = run("compile/512KiB/raymond", func(b *testing.B) { bench.ParseRaymond(b, big) })
	c.bigPR = run("compile/512KiB/postroom", func(b *testing.B) { bench.CompilePostroom(b, big) })
	c.loadAfter = loadAverage()
}

// printCompilePath writes the compile-path table.
func (r *report) printCompilePath(out io.Writer) {
	c := &r.compile
	fmt.Fprintf(out, "compiles, one core (GOMAXPROCS 1); cpu = the process's CPU time per operation; load average %s before, %s after\n", c.loadBefore, c.loadAfter)
	t := &table{right: []bool{false, false, true, true, true, true, true, true}}
	t.add("operation", "side", "ns/op", "cpu-ns/op", "allocs/op", "B/op", "MB/s", "ratio")
	row := func(group, side string, s stats, base *stats, srcBytes int) {
		if !s.ok {
			t.add(group, side, s.note)
			return
		}
		ratio, mbps := "", ""
		if base != nil && base.ok && s.ns > 0 {
			ratio = fmt.Sprintf("%.1fx", base.ns/s.ns)
		}
		if srcBytes > 0 && s.ns > 0 {
			mbps = num(float64(srcBytes)*1e3/s.ns, 1) // source bytes
		}
		cpu := "-"
		if s.cpu > 0 {
			cpu = num(s.cpu, 0)
		}
		t.add(group, side, num(s.ns, 0), cpu, num(s.allocs, 0), num(s.bytes, 0), mbps, ratio)
	}
	row(fmt.Sprintf("compile html (%s B)", num(float64(c.htmlBytes), 0)), "raymond.Parse", c.htmlRaymond, nil, c.htmlBytes)
	row("", "postroom program.Compile", c.htmlPR, &c.htmlRaymond, c.htmlBytes)
	row(fmt.Sprintf("compile %s B", num(float64(c.bigBytes), 0)), "raymond.Parse", c.bigRaymond, nil, c.bigBytes)
	row("", "postroom program.Compile", c.bigPR, &c.bigRaymond, c.bigBytes)
	t.write(out)
	fmt.Fprintln(out, "(MB/s: source bytes)")
}
