// Command report runs postroom's render-path comparisons on the workload
// (testdata/workload/transactional.json) and prints them as tables, with
// the ratios to the obvious way (raymond + go-mail, internal/testkit/bench's
// Obvious) and to the floors: the render, MIME and pipeline rows with the
// pipeline's wall time, peak heap and maximum RSS and the memmove floor;
// DKIM signing against the obvious way's (go-msgauth's dkim.Sign) and the
// floor of signing (the SHA-256 and a copy of each message); the
// generated text part of a call with html only, alone and in the
// pipeline, against k3a/html2text; a one-recipient call at GOMAXPROCS 1
// and 2 against the obvious way parsing its templates every call and
// once; the compiles on one core against raymond's parse; which of the
// goals are met; then the costs of watching a call (observability.go):
// the pipeline with a progress callback, and transport.SMTP with its
// Logger silent, at info and at debug level.
//
// Run it from anywhere inside the repository:
//
//	go run ./benchmarks/cmd/report            # N = 25,000; takes about five minutes
//	go run ./benchmarks/cmd/report -quick     # N = 2,500, shorter runs
//	go run ./benchmarks/cmd/report -count 3   # the median of 3 runs of each, on a busy machine
//
// The benchmarks of package benchmarks (their bodies are in internal/testkit/bench)
// run in this process through testing.Benchmark.
// Maximum RSS comes from running one call in a child process (this program
// again) and reading the child's resource usage.
//
// From the module it imports internal/testkit/bench, internal/testkit/fixture and
// internal/testkit/workload; nothing imports it.
package main

import (
	"bytes"
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/postroom/postroom/internal/testkit/bench"
	"github.com/postroom/postroom/internal/testkit/fixture"
	"github.com/postroom/postroom/internal/testkit/workload"
)

// smallN is the smaller call size, against which peak heap is compared.
const smallN = 1000

func main() {
	fs := flag.NewFlagSet("report", flag.ExitOnError)
	n := fs.Int("n", 25000, "recipients of the large pipeline call")
	quick := fs.Bool("quick", false, "a fast look: N = 2,500 unless -n is given, shorter benchmark runs, no RSS of the obvious way")
	workloadFile := fs.String("workload", "", "path of the workload (default: "+workload.FromRoot+" in the repository)")
	count := fs.Int("count", 1, "run each benchmark this many times and report the run with the median ns/recipient")
	child := fs.String("rss-child", "", "internal: send one call of -n recipients with this pipeline (postroom or obvious) and exit")
	_ = fs.Parse(os.Args[1:])
	nSet := false
	fs.Visit(func(f *flag.Flag) { nSet = nSet || f.Name == "n" })
	if *quick && !nSet {
		*n = 2500
	}
	if *n < 1 {
		fatalf("-n must be at least 1")
	}

	path := *workloadFile
	if path == "" {
		var err error
		if path, err = workload.Path(); err != nil {
			fatalf("%v (run from inside the repository, or give -workload)", err)
		}
	}
	w, err := fixture.Load(path)
	if err != nil {
		fatalf("%v", err)
	}
	if *child != "" {
		if err := runChild(w, *child, *n); err != nil {
			fatalf("%v", err)
		}
		if hwm, ok := selfHWM(); ok {
			fmt.Printf("%s %d\n", hwmLine, hwm)
		}
		return
	}

	testing.Init()
	if *quick {
		_ = flag.Set("test.benchtime", "300ms")
	}
	r := &report{w: w, n: *n, quick: *quick, count: max(1, *count), workload: path, out: os.Stderr}
	r.run()
	r.print(os.Stdout)
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "report: "+format+"\n", args...)
	os.Exit(1)
}

// stats are one measured side, per recipient.
type stats struct {
	ok                bool
	note              string // why ok is false
	ns, allocs, bytes float64
	mbps              float64
	wall              time.Duration // per operation: per call for pipelines
	base, heap, live  float64       // MB, for pipelines
	hasHeap           bool
	rss               float64 // MB, for childRSS
	rssNote           string
	cpu               float64 // process CPU ns per recipient, or per operation (opStats); 0: not measured
}

func fromResult(res testing.BenchmarkResult) stats {
	if res.N == 0 {
		return stats{note: "failed: run the go test benchmark to see why"}
	}
	s := stats{ok: true}
	s.ns = res.Extra["ns/recipient"]
	s.allocs = res.Extra["allocs/recipient"]
	s.bytes = res.Extra["B/recipient"]
	if res.T > 0 {
		s.mbps = float64(res.Bytes) * float64(res.N) / 1e6 / res.T.Seconds()
	}
	s.wall = time.Duration(res.NsPerOp())
	s.cpu = res.Extra["cpu-ns/recipient"]
	if h, ok := res.Extra["peak-heap-MB"]; ok {
		s.hasHeap = true
		s.heap, s.live, s.base = h, res.Extra["peak-live-MB"], res.Extra["base-heap-MB"]
	}
	return s
}

// report holds every measurement.
type report struct {
	w        *fixture.Workload
	n        int
	quick    bool
	count    int
	workload string
	out      io.Writer // progress

	msgSize                    int
	renderRaymond, renderPR    stats
	mimeGoMail, mimePR, mimeSk stats
	pipeObvious, pipePR        map[int]stats
	floor                      stats
	rssPR, rssObvious          stats
	compile                    compilePath
	dkim                       dkimSigning
	text                       textPart
	one                        [2]oneRecipient // at GOMAXPROCS 1 and 2
	obs                        observability
}

func (r *report) sizes() []int {
	if r.n <= smallN {
		return []int{r.n}
	}
	return []int{smallN, r.n}
}

// bench runs f r.count times and returns the run with the median
// ns/recipient (a failed run sorts last).
func (r *report) bench(name string, f func(*testing.B)) stats {
	return r.benchWith(name, f, fromResult)
}

// benchWith is bench with the figures read from each run by read.
func (r *report) benchWith(name string, f func(*testing.B), read func(testing.BenchmarkResult) stats) stats {
	runs := make([]stats, r.count)
	for i := range runs {
		fmt.Fprintf(r.out, "running %s (%d/%d) ...\n", name, i+1, r.count)
		runs[i] = read(testing.Benchmark(f))
	}
	slices.SortFunc(runs, func(a, b stats) int {
		if a.ok != b.ok {
			if a.ok {
				return -1
			}
			return 1
		}
		return cmp.Compare(a.ns, b.ns)
	})
	return runs[(len(runs)-1)/2]
}

func (r *report) run() {
	var err error
	if r.msgSize, err = bench.MessageSize(r.w); err != nil {
		fatalf("%v", err)
	}
	w := r.w
	fmt.Fprintf(r.out, "measuring the max RSS of one call of %d recipients in a child process ...\n", r.n)
	r.rssPR = childRSS(r.workload, "postroom", r.n)
	if !r.quick {
		r.rssObvious = childRSS(r.workload, "obvious", r.n)
	}
	r.renderRaymond = r.bench("render/raymond", func(b *testing.B) { bench.RenderRaymond(b, w) })
	r.renderPR = r.bench("render/postroom", func(b *testing.B) { bench.RenderPostroom(b, w) })
	r.mimeGoMail = r.bench("mime/gomail", func(b *testing.B) { bench.MIMEGoMail(b, w) })
	r.mimePR = r.bench("mime/postroom", func(b *testing.B) { bench.MIMEPostroom(b, w) })
	r.mimeSk = r.bench("mime/skeleton", func(b *testing.B) { bench.MIMESkeleton(b, w) })
	r.pipeObvious, r.pipePR = map[int]stats{}, map[int]stats{}
	for _, n := range r.sizes() {
		r.pipeObvious[n] = r.bench(fmt.Sprintf("pipeline/obvious/N=%d", n), func(b *testing.B) { bench.PipelineObvious(b, w, n) })
		r.pipePR[n] = r.bench(fmt.Sprintf("pipeline/postroom/N=%d", n), func(b *testing.B) { bench.PipelinePostroom(b, w, n) })
	}
	r.floor = r.bench("memmove floor", func(b *testing.B) { bench.Memmove(b, w) })
	r.runDKIM()
	r.runTextPart()
	r.runOneRecipient()
	r.runCompilePath()
	r.runObservability()
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// runChild is the child side of childRSS: one call, then exit.
func runChild(w *fixture.Workload, pipeline string, n int) error {
	call := w.Call(n)
	discard := bench.Discard()
	switch pipeline {
	case "postroom":
		m, err := bench.NewMailer(discard, bench.Concurrency())
		if err != nil {
			return err
		}
		return bench.SendAll(context.Background(), m, call)
	case "obvious":
		return (&bench.Obvious{Transport: discard, Concurrency: bench.Concurrency()}).Send(context.Background(), call)
	}
	return fmt.Errorf("unknown pipeline %q", pipeline)
}

// hwmLine starts the line on which a child reports its peak RSS.
const hwmLine = "rss-high-water-bytes"

// childRSS runs this program again to send one call with pipeline, and
// returns the child's maximum resident set size: the high-water mark the
// child reads from /proc/self/status where there is one. The resource usage
// of the exited child is only the fallback: on Linux its maxrss also counts
// the parent's memory at the time of the exec (the child starts in the
// parent's address space), so it overstates a small child of a large parent.
func childRSS(workloadPath, pipeline string, n int) stats {
	exe, err := os.Executable()
	if err != nil {
		return stats{rssNote: err.Error()}
	}
	cmd := exec.Command(exe, "-rss-child", pipeline, "-n", strconv.Itoa(n), "-workload", workloadPath)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return stats{rssNote: fmt.Sprintf("child failed: %v: %s", err, lastLine(out.String()))}
	}
	wall := time.Since(start)
	for line := range strings.Lines(out.String()) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), hwmLine+" "); ok {
			if hwm, err := strconv.ParseInt(v, 10, 64); err == nil {
				return stats{ok: true, rss: float64(hwm) / 1e6, wall: wall}
			}
		}
	}
	rss, err := maxRSS(cmd.ProcessState)
	if err != nil {
		return stats{rssNote: err.Error()}
	}
	return stats{ok: true, rss: float64(rss) / 1e6, wall: wall, rssNote: "rusage, includes the parent at exec"}
}

// print writes the table and the summary.
func (r *report) print(out io.Writer) {
	fmt.Fprintf(out, "postroom render path, shared workload (%d-byte messages), %s, GOMAXPROCS %d, %s/%s\n", r.msgSize, runtime.Version(), runtime.GOMAXPROCS(0), runtime.GOOS, runtime.GOARCH)
	fmt.Fprintf(out, "pipelines: %d recipients in flight, discarding transport; MB/s in message bytes; ratio = baseline ns ÷ this row's ns\n\n", bench.Concurrency())
	t := &table{right: []bool{false, false, true, true, true, true, true}}
	t.add("comparison", "side", "ns/recipient", "allocs/recipient", "B/recipient", "MB/s", "ratio")
	row := func(group, side string, s stats, base *stats) {
		if !s.ok {
			t.add(group, side, s.note)
			return
		}
		ratio := ""
		if base != nil && base.ok && s.ns > 0 {
			ratio = fmt.Sprintf("%.1fx", base.ns/s.ns)
		}
		t.add(group, side, num(s.ns, 0), num(s.allocs, 1), num(s.bytes, 0), num(s.mbps, 0), ratio)
	}
	row("render", "raymond Exec, merged map", r.renderRaymond, nil)
	row("", "postroom program Append", r.renderPR, &r.renderRaymond)
	row("MIME", "go-mail Msg + WriteTo", r.mimeGoMail, nil)
	row("", "postroom Mailer, static bodies, 1 worker (MIME + overhead)", r.mimePR, &r.mimeGoMail)
	row("", "postroom skeleton alone (internal/mimemsg Append)", r.mimeSk, &r.mimeGoMail)
	for _, n := range r.sizes() {
		o := r.pipeObvious[n]
		row(fmt.Sprintf("pipeline N=%d", n), "obvious: raymond + go-mail", o, nil)
		row("", "postroom Mailer", r.pipePR[n], &o)
	}
	row("floor", "memmove into a cold buffer", r.floor, nil)
	t.write(out)

	fmt.Fprintln(out)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "pipeline, N=%d\tobvious\tpostroom\tratio\n", r.n)
	o, p := r.pipeObvious[r.n], r.pipePR[r.n]
	fmt.Fprintf(tw, "wall time per call\t%s\t%s\t%s\n", dur(o), dur(p), ratio(o.ok && p.ok, float64(o.wall), float64(p.wall)))
	fmt.Fprintf(tw, "max RSS, one call in a child process\t%s\t%s\t\n", rss(r.rssObvious, r.quick), rss(r.rssPR, false))
	sizes := r.sizes()
	for _, n := range sizes {
		o, p := r.pipeObvious[n], r.pipePR[n]
		fmt.Fprintf(tw, "N=%d: peak heap / peak live / base, MB\t%s\t%s\t\n", n, heap(o), heap(p))
	}
	tw.Flush()

	fmt.Fprintln(out)
	r.printDKIM(out)
	fmt.Fprintln(out)
	r.printTextPart(out)
	fmt.Fprintln(out)
	r.printOneRecipient(out)
	fmt.Fprintln(out)
	r.printCompilePath(out)

	fmt.Fprintln(out)
	r.goals(out)
	r.printObservability(out)
}

// goals prints the goals of the render path and whether each is met.
func (r *report) goals(out io.Writer) {
	fmt.Fprintf(out, "goals (N=%d)\n", r.n)
	check := func(ok bool, goal, detail string) {
		mark := "NOT MET"
		if ok {
			mark = "met"
		}
		fmt.Fprintf(out, "  %-8s %-55s %s\n", mark, goal, detail)
	}
	unknown := func(goal string) { fmt.Fprintf(out, "  %-8s %s\n", "unknown", goal) }
	if r.renderRaymond.ok && r.renderPR.ok {
		x := r.renderRaymond.ns / r.renderPR.ns
		check(x >= 15, "render >= 15x faster than raymond Exec", fmt.Sprintf("%.1fx", x))
	} else {
		unknown("render >= 15x faster than raymond Exec")
	}
	o, p := r.pipeObvious[r.n], r.pipePR[r.n]
	if o.ok && p.ok {
		x := o.ns / p.ns
		check(x >= 15, "pipeline >= 15x faster than the obvious way", fmt.Sprintf("%.1fx", x))
	} else {
		unknown("pipeline >= 15x faster than the obvious way")
	}
	if p.ok && r.floor.ok {
		x := p.ns / r.floor.ns
		check(x <= 4, "pipeline within 4x of the memmove floor per message", fmt.Sprintf("%.2fx (%s vs %s ns)", x, num(p.ns, 0), num(r.floor.ns, 0)))
	} else {
		unknown("pipeline within 4x of the memmove floor per message")
	}
	if p.ok {
		check(p.wall < time.Second, "pipeline under 1 s wall time", fmt.Sprintf("%.3f s", p.wall.Seconds()))
		check(p.bytes < 2048, "under 2 KB allocated per recipient", fmt.Sprintf("%s B/recipient, %s allocs/recipient", num(p.bytes, 0), num(p.allocs, 1)))
	}
	if small, big := r.pipePR[smallN], r.pipePR[r.n]; r.n > smallN && small.ok && big.ok && small.hasHeap && big.hasHeap {
		x := big.heap / small.heap
		added := (big.heap - big.base) / (small.heap - small.base)
		check(x <= 1.2, fmt.Sprintf("peak heap flat in N (%d vs %d within 20%%)", smallN, r.n),
			fmt.Sprintf("%.2fx (%.1f vs %.1f MB); above the base heap: %.2fx (%.1f vs %.1f MB)", x, small.heap, big.heap, added, small.heap-small.base, big.heap-big.base))
	}
	if r.rssPR.ok {
		check(r.rssPR.rss < 100, "under 100 MB RSS", fmt.Sprintf("%.1f MB", r.rssPR.rss))
	}
	r.goalsDKIM(check, unknown)
	r.goalsTextPart(check, unknown)
	r.goalsOneRecipient(check, unknown)
	if r.n != 25000 {
		fmt.Fprintf(out, "  (the goals are stated for N=25,000; this run used N=%d)\n", r.n)
	}
}

// table is a text table whose columns are aligned left or right.
type table struct {
	right []bool
	rows  [][]string
}

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

func (t *table) write(out io.Writer) {
	width := make([]int, len(t.right))
	for _, r := range t.rows {
		for i, c := range r {
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	for _, r := range t.rows {
		var b strings.Builder
		for i, c := range r {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			if t.right[i] {
				b.WriteString(pad + c)
			} else {
				b.WriteString(c + pad)
			}
			b.WriteString("  ")
		}
		fmt.Fprintln(out, strings.TrimRight(b.String(), " "))
	}
}

func num(v float64, prec int) string {
	s := strconv.FormatFloat(v, 'f', prec, 64)
	intPart, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	for i, c := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 && intPart[i-1] != '-' {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if frac != "" {
		b.WriteString("." + frac)
	}
	return b.String()
}

func dur(s stats) string {
	if !s.ok {
		return "-"
	}
	return fmt.Sprintf("%.3f s", s.wall.Seconds())
}

func ratio(ok bool, base, v float64) string {
	if !ok || v == 0 {
		return ""
	}
	return fmt.Sprintf("%.1fx", base/v)
}

func rss(s stats, skipped bool) string {
	switch {
	case skipped:
		return "(skipped with -quick)"
	case !s.ok:
		return s.rssNote
	}
	if s.rssNote != "" {
		return fmt.Sprintf("%.1f MB (%s)", s.rss, s.rssNote)
	}
	return fmt.Sprintf("%.1f MB", s.rss)
}

// selfHWM returns this process's peak resident set size in bytes, from
// the VmHWM line of /proc/self/status, where the system has one.
func selfHWM() (int64, bool) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb * 1024, err == nil
		}
	}
	return 0, false
}

func heap(s stats) string {
	if !s.ok || !s.hasHeap {
		return "-"
	}
	return fmt.Sprintf("%.1f / %.1f / %.1f", s.heap, s.live, s.base)
}
