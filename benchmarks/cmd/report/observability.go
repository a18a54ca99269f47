package main

import (
	"cmp"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"testing"

	"github.com/postroom/postroom/internal/testkit/bench"
)

// observability holds the costs of watching a call: the pipeline of N
// recipients without and with a progress callback, measured one after the
// other, and transport.SMTP per message with its Logger silent, at info
// and at debug level (TextHandler into io.Discard).
type observability struct {
	pipe, pipeOnResult watched
	smtp               [3]watched // silent, info, debug
}

// watched is one side's figures and its CPU time per recipient (0: not
// measured on this system).
type watched struct {
	stats
	cpu float64
}

var smtpLoggers = [3]struct {
	name, side string
	level      slog.Level
}{
	{"silent", "Logger nil (silent)", 0},
	{"info", "Logger info, TextHandler to io.Discard", slog.LevelInfo},
	{"debug", "Logger debug (protocol trace), TextHandler to io.Discard", slog.LevelDebug},
}

func (r *report) runObservability() {
	w, n := r.w, r.n
	r.obs.pipe = r.benchCPU(fmt.Sprintf("observability/pipeline/N=%d", n), func(b *testing.B) { bench.PipelineOnResult(b, w, n, false) })
	r.obs.pipeOnResult = r.benchCPU(fmt.Sprintf("observability/pipeline+OnResult/N=%d", n), func(b *testing.B) { bench.PipelineOnResult(b, w, n, true) })
	for i, l := range smtpLoggers {
		var logger *slog.Logger
		if l.name != "silent" {
			logger = slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: l.level}))
		}
		r.obs.smtp[i] = r.benchCPU("observability/smtp/"+l.name, func(b *testing.B) { bench.SMTPLogging(b, w, logger) })
	}
}

// benchCPU runs f r.count times and returns the run with the median CPU
// time per recipient (a failed run sorts last).
func (r *report) benchCPU(name string, f func(*testing.B)) watched {
	runs := make([]watched, r.count)
	for i := range runs {
		fmt.Fprintf(r.out, "running %s (%d/%d) ...\n", name, i+1, r.count)
		res := testing.Benchmark(f)
		runs[i] = watched{stats: fromResult(res), cpu: res.Extra["cpu-ns/recipient"]}
	}
	slices.SortFunc(runs, func(a, b watched) int {
		if a.ok != b.ok {
			if a.ok {
				return -1
			}
			return 1
		}
		return cmp.Compare(a.cpu, b.cpu)
	})
	return runs[(len(runs)-1)/2]
}

// printObservability writes the observability table: per recipient (per
// message for SMTP), with the difference to the first row of each group
// and what it comes to for a call of N recipients.
func (r *report) printObservability(out io.Writer) {
	fmt.Fprintf(out, "\nobservability: progress callback (N=%d, discarding transport) and SMTP logging (%d connections, in-process server offering CHUNKING)\n", r.n, bench.SMTPConns)
	fmt.Fprintf(out, "cpu-ns: the process's CPU time (every goroutine, the test server's too), steadier than wall time on a shared machine; the median run by it\n")
	t := &table{right: []bool{false, false, true, true, true, true, true}}
	t.add("comparison", "side", "ns/recipient", "cpu-ns/recipient", "allocs/recipient", "B/recipient", fmt.Sprintf("CPU added per call of %d", r.n))
	row := func(group, side string, s watched, base *watched) {
		if !s.ok {
			t.add(group, side, s.note)
			return
		}
		added := ""
		if base != nil && base.ok && s.cpu > 0 && base.cpu > 0 {
			added = fmt.Sprintf("%+.1f ms", (s.cpu-base.cpu)*float64(r.n)/1e6)
		}
		t.add(group, side, num(s.ns, 0), num(s.cpu, 0), num(s.allocs, 1), num(s.bytes, 0), added)
	}
	row(fmt.Sprintf("pipeline N=%d", r.n), "postroom Mailer", r.obs.pipe, nil)
	row("", "with OnResult appending to a mutex-guarded slice", r.obs.pipeOnResult, &r.obs.pipe)
	for i, l := range smtpLoggers {
		group, base := "", &r.obs.smtp[0]
		if i == 0 {
			group, base = "SMTP, per message", nil
		}
		row(group, l.side, r.obs.smtp[i], base)
	}
	t.write(out)
}
