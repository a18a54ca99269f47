package main

import (
	"fmt"
	"io"
	"runtime"
	"testing"

	"github.com/postroom/postroom/internal/testkit/bench"
)

// oneRecipient holds a one-recipient call at one GOMAXPROCS: the obvious
// way parsing its templates every call and parsing them once, and
// postroom's Send with the template cache off (cold), warm, and warm with
// each call's files in strings of their own (bench.OneRecipientFresh).
type oneRecipient struct {
	procs                 int
	obvious, obviousOnce  stats
	cold, warm, warmFresh stats
	loadBefore, loadAfter string
}

// oneRecipientProcs are the GOMAXPROCS the one-recipient goals are stated
// for.
var oneRecipientProcs = [2]int{1, 2}

func (r *report) runOneRecipient() {
	w := r.w
	prev := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(prev)
	for i, procs := range oneRecipientProcs {
		runtime.GOMAXPROCS(procs)
		o := &r.one[i]
		o.procs = procs
		o.loadBefore = loadAverage()
		run := func(name string, f func(*testing.B)) stats {
			return r.benchWith(fmt.Sprintf("one recipient/%s/GOMAXPROCS=%d", name, procs), f, opStats)
		}
		o.obvious = run("obvious", func(b *testing.B) { bench.OneRecipientObvious(b, w, false) })
		o.obviousOnce = run("obvious, parsed once", func(b *testing.B) { bench.OneRecipientObvious(b, w, true) })
		o.cold = run("cold", func(b *testing.B) { bench.OneRecipient(b, w, false) })
		o.warm = run("warm", func(b *testing.B) { bench.OneRecipient(b, w, true) })
		o.warmFresh = run("warm, fresh file strings", func(b *testing.B) { bench.OneRecipientFresh(b, w) })
		o.loadAfter = loadAverage()
	}
}

func (r *report) printOneRecipient(out io.Writer) {
	fmt.Fprintln(out, "one-recipient call, per call; cpu = the process's CPU time per call; ratios = that side's ns ÷ this row's ns")
	t := &table{right: []bool{false, false, true, true, true, true, true, true}}
	t.add("GOMAXPROCS", "side", "ns/op", "cpu-ns/op", "allocs/op", "B/op", "vs obvious", "vs parsed once")
	for _, o := range r.one {
		row := func(group, side string, s stats) {
			if !s.ok {
				t.add(group, side, s.note)
				return
			}
			x := func(base stats) string {
				if !base.ok || s.ns == 0 {
					return ""
				}
				return fmt.Sprintf("%.1fx", base.ns/s.ns)
			}
			cpu := "-"
			if s.cpu > 0 {
				cpu = num(s.cpu, 0)
			}
			t.add(group, side, num(s.ns, 0), cpu, num(s.allocs, 0), num(s.bytes, 0), x(o.obvious), x(o.obviousOnce))
		}
		group := fmt.Sprintf("%d (load %s → %s)", o.procs, o.loadBefore, o.loadAfter)
		row(group, "obvious: raymond.Parse + Exec + go-mail, parsing every call", o.obvious)
		row("", "obvious, templates parsed once", o.obviousOnce)
		row("", "postroom, template cache off: compiles every call", o.cold)
		row("", "postroom, warm", o.warm)
		row("", fmt.Sprintf("postroom, warm, fresh file strings (%d copies in turn)", bench.FreshCalls), o.warmFresh)
	}
	t.write(out)
}

// goalsOneRecipient checks the one-recipient goals: at most 100 µs warm
// at GOMAXPROCS 1 and 2, checked on the call with fresh file strings (a
// server decoding each request has them; the same strings every call
// would let a cache find its files by pointer), the call with the same
// strings shown beside it; and the earlier goals on one core, 300 µs warm
// and 1 ms with the cache off.
func (r *report) goalsOneRecipient(check func(ok bool, goal, detail string), unknown func(goal string)) {
	detail := func(s stats) string {
		if s.cpu > 0 {
			return fmt.Sprintf("%s µs (CPU time %s µs)", num(s.ns/1e3, 0), num(s.cpu/1e3, 0))
		}
		return fmt.Sprintf("%s µs", num(s.ns/1e3, 0))
	}
	for _, o := range r.one {
		goal := fmt.Sprintf("one-recipient call <= 100 µs warm, GOMAXPROCS %d", o.procs)
		if !o.warmFresh.ok {
			unknown(goal)
			continue
		}
		d := "fresh file strings " + detail(o.warmFresh)
		if o.warm.ok {
			d += "; same strings " + detail(o.warm)
		}
		check(o.warmFresh.ns <= 100e3, goal, d)
	}
	one := r.one[0]
	if one.warm.ok {
		check(one.warm.ns <= 300e3, "one-recipient call <= 300 µs, warm cache, one core", detail(one.warm))
	}
	if one.cold.ok {
		check(one.cold.ns <= 1e6, "one-recipient call <= 1 ms, cache off, one core", detail(one.cold))
	}
}
