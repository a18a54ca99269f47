package main

import (
	"fmt"
	"io"
	"runtime"
	"testing"

	"github.com/postroom/postroom/internal/testkit/bench"
)

// dkimSigning holds the cost of DKIM signing at N: the postroom pipeline
// (PipelineDKIM) and the obvious one (raymond + go-mail + go-msgauth's
// dkim.Sign, PipelineObviousDKIM) signed with each key kind, and the floor
// of signing, the SHA-256 and a copy of each message (DKIMFloor). The
// unsigned rows are the report's pipelines at N.
type dkimSigning struct {
	postroom, obvious map[string]stats // by key kind
	floor             stats
}

func (r *report) runDKIM() {
	w, d := r.w, &r.dkim
	d.floor = r.bench("dkim floor", func(b *testing.B) { bench.DKIMFloor(b, w) })
	d.postroom, d.obvious = map[string]stats{}, map[string]stats{}
	for _, kind := range bench.DKIMKeys[1:] { // unsigned are pipeObvious[r.n] and pipePR[r.n]
		d.obvious[kind] = r.bench(fmt.Sprintf("pipeline/obvious-dkim-%s/N=%d", kind, r.n), func(b *testing.B) { bench.PipelineObviousDKIM(b, w, r.n, kind) })
		d.postroom[kind] = r.bench(fmt.Sprintf("pipeline/dkim-%s/N=%d", kind, r.n), func(b *testing.B) { bench.PipelineDKIM(b, w, r.n, kind) })
	}
}

func (r *report) printDKIM(out io.Writer) {
	d := &r.dkim
	fmt.Fprintf(out, "DKIM signing, N=%d, GOMAXPROCS %d; floor = the SHA-256 and a copy of each message on as many goroutines; relaxed/relaxed on both sides, the obvious way signing go-mail's message with go-msgauth's dkim.Sign\n", r.n, runtime.GOMAXPROCS(0))
	v := newVersus("recipient")
	o, p := r.pipeObvious[r.n], r.pipePR[r.n]
	v.row("unsigned", "obvious: raymond + go-mail", o, nil, nil)
	v.row("", "postroom Mailer", p, &o, nil)
	for _, kind := range bench.DKIMKeys[1:] {
		o, s := d.obvious[kind], d.postroom[kind]
		v.row(kind, "obvious: raymond + go-mail + go-msgauth dkim.Sign", o, nil, &d.floor)
		side := "postroom Mailer"
		if s.ok && p.ok {
			side += fmt.Sprintf(" (+%s ns/recipient over unsigned)", num(s.ns-p.ns, 0))
		}
		v.row("", side, s, &o, &d.floor)
	}
	v.row("floor", "SHA-256 + copy of each message", d.floor, nil, nil)
	v.write(out)
}

func (r *report) goalsDKIM(check func(ok bool, goal, detail string), unknown func(goal string)) {
	const goal = "DKIM ed25519 within 1.25x of SHA-256 + copy"
	d, f := r.dkim.postroom["ed25519"], r.dkim.floor
	if !d.ok || !f.ok {
		unknown(goal)
		return
	}
	x := d.ns / f.ns
	detail := fmt.Sprintf("%.2fx (%s vs %s ns)", x, num(d.ns, 0), num(f.ns, 0))
	if d.cpu > 0 && f.cpu > 0 {
		detail += fmt.Sprintf("; CPU time %.2fx", d.cpu/f.cpu)
	}
	check(x <= 1.25, goal, detail)
}
