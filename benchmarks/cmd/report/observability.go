package main

import (
	"fmt"
	"io"
	"log/slog"
	"testing"

	"github.com/postroom/postroom/internal/bench"
)

// observability holds the costs of watching a call: the pipeline of N
// recipients without and with a progress callback, measured one after the
// other, and transport.SMTP per message with its Logger silent, at info
// and at debug level (TextHandler into io.Discard).
type observability struct {
	pipe, pipeOnResult stats
	smtp               [3]stats // silent, info, debug
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
	r.obs.pipe = r.bench(fmt.Sprintf("observability/pipeline/N=%d", n), func(b *testing.B) { bench.PipelinePostroom(b, w, n) })
	r.obs.pipeOnResult = r.bench(fmt.Sprintf("observability/pipeline+OnResult/N=%d", n), func(b *testing.B) { bench.PipelineOnResult(b, w, n) })
	for i, l := range smtpLoggers {
		var logger *slog.Logger
		if l.name != "silent" {
			logger = slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: l.level}))
		}
		r.obs.smtp[i] = r.bench("observability/smtp/"+l.name, func(b *testing.B) { bench.SMTPLogging(b, w, logger) })
	}
}

// printObservability writes the observability table: per recipient (per
// message for SMTP), with the difference to the first row of each group
// and what it comes to for a call of N recipients.
func (r *report) printObservability(out io.Writer) {
	fmt.Fprintf(out, "\nobservability: progress callback (N=%d, discarding transport) and SMTP logging (%d connections, in-process server offering CHUNKING)\n", r.n, bench.SMTPConns)
	t := &table{right: []bool{false, false, true, true, true, true}}
	t.add("comparison", "side", "ns/recipient", "allocs/recipient", "B/recipient", fmt.Sprintf("added per call of %d", r.n))
	row := func(group, side string, s stats, base *stats) {
		if !s.ok {
			t.add(group, side, s.note)
			return
		}
		added := ""
		if base != nil && base.ok {
			added = fmt.Sprintf("%+.1f ms", (s.ns-base.ns)*float64(r.n)/1e6)
		}
		t.add(group, side, num(s.ns, 0), num(s.allocs, 1), num(s.bytes, 0), added)
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
