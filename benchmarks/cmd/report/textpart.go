package main

import (
	"fmt"
	"io"
	"runtime"
	"testing"
	"time"

	"github.com/postroom/postroom/internal/testkit/bench"
)

// textPartProcs is the GOMAXPROCS of the html-only pipelines: the goal of
// a 25,000-recipient html-only call is stated for two cores.
const textPartProcs = 2

// textPart holds the cost of the generated text part: the conversion of
// one rendered html alone on one core, by k3a/html2text and by postroom's
// htmltext.Converter; and at GOMAXPROCS textPartProcs, the pipeline of N
// on the workload's call without its text, the obvious way (with
// html2text) and postroom's, and postroom's on the call with its text,
// measured right after, whose CPU time the generated part adds to.
type textPart struct {
	html2text, htmltext         stats // per conversion
	obvious, postroom, withText stats // per recipient
}

func (r *report) runTextPart() {
	w, t, n := r.w, &r.text, r.n
	prev := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(prev)
	t.html2text = r.benchWith("text part/html2text", func(b *testing.B) { bench.TextPartHTML2Text(b, w) }, opStats)
	t.htmltext = r.benchWith("text part/postroom", func(b *testing.B) { bench.TextPartPostroom(b, w) }, opStats)
	runtime.GOMAXPROCS(textPartProcs)
	t.obvious = r.bench(fmt.Sprintf("pipeline/html-only/obvious/N=%d", n), func(b *testing.B) { bench.PipelineHTMLOnlyObvious(b, w, n) })
	t.postroom = r.bench(fmt.Sprintf("pipeline/html-only/postroom/N=%d", n), func(b *testing.B) { bench.PipelineHTMLOnlyPostroom(b, w, n) })
	t.withText = r.bench(fmt.Sprintf("pipeline/with-text/postroom/N=%d", n), func(b *testing.B) { bench.PipelinePostroom(b, w, n) })
}

// added is the CPU time per recipient the generated part adds to the call
// (the html-only call's less the call's with its text), and whether both
// were measured.
func (t *textPart) added() (float64, bool) {
	return t.postroom.cpu - t.withText.cpu, t.postroom.ok && t.withText.ok && t.postroom.cpu > 0 && t.withText.cpu > 0
}

func (r *report) printTextPart(out io.Writer) {
	t := &r.text
	fmt.Fprintf(out, "generated text part: a call with html and no text; the conversion alone on one core, per document; the pipelines of N=%d at GOMAXPROCS %d, per recipient\n", r.n, textPartProcs)
	v := newVersus("unit")
	v.row("text part alone", "k3a/html2text HTML2Text", t.html2text, nil, nil)
	v.row("", "postroom htmltext.Converter (reused, as each worker keeps one)", t.htmltext, &t.html2text, nil)
	v.row(fmt.Sprintf("html-only N=%d", r.n), "obvious: raymond + go-mail + html2text", t.obvious, nil, &r.floor)
	v.row("", "postroom Mailer", t.postroom, &t.obvious, &r.floor)
	v.row("", "postroom Mailer, the call with its text (for the difference)", t.withText, nil, &r.floor)
	v.row("floor", "memmove into a cold buffer", r.floor, nil, nil)
	v.write(out)
	o, p := t.obvious, t.postroom
	fmt.Fprintf(out, "wall time per html-only call: obvious %s, postroom %s", dur(o), dur(p))
	if o.ok && p.ok {
		fmt.Fprintf(out, " (%.1fx)", o.wall.Seconds()/p.wall.Seconds())
	}
	fmt.Fprintln(out)
	if d, ok := t.added(); ok {
		fmt.Fprintf(out, "CPU time the generated part adds per recipient in the call: %s ns (%s html-only - %s with text)\n", num(d, 0), num(p.cpu, 0), num(t.withText.cpu, 0))
	}
}

// goalsTextPart checks the text part's goals. The CPU per recipient is
// checked on the conversion alone, on one core: it is what the part
// costs, measured by itself; the difference of the two pipelines, shown
// beside it, also counts the text template the html-only call does not
// render, and is the difference of two figures taken on all cores, whose
// noise on a shared machine is as large as the part.
func (r *report) goalsTextPart(check func(ok bool, goal, detail string), unknown func(goal string)) {
	t := &r.text
	const cpuGoal = "generated text part <= 10 µs CPU per recipient"
	if t.htmltext.ok && t.htmltext.cpu > 0 {
		detail := fmt.Sprintf("%.1f µs CPU per conversion, one core", t.htmltext.cpu/1e3)
		if d, ok := t.added(); ok {
			detail += fmt.Sprintf("; in the call: %+.1f µs", d/1e3)
		}
		check(t.htmltext.cpu <= 10e3, cpuGoal, detail)
	} else {
		unknown(cpuGoal)
	}
	const wallGoal = "25,000-recipient html-only call < 0.4 s, 2 cores"
	if p := t.postroom; p.ok {
		wall, detail := p.wall, ""
		if r.n != 25000 {
			wall = time.Duration(p.ns * 25000)
			detail = fmt.Sprintf(" (%s ns/recipient × 25,000; measured at N=%d)", num(p.ns, 0), r.n)
		}
		check(wall < 400*time.Millisecond, wallGoal, fmt.Sprintf("%.3f s%s", wall.Seconds(), detail))
	} else {
		unknown(wallGoal)
	}
}
