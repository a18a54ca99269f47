package main

import (
	"fmt"
	"io"
)

// versus is a table of rows set against the obvious way and a floor: per
// row its wall and CPU time per unit (recipient or operation), allocations,
// bytes and MB/s, the obvious way's time over its own (how many times
// faster it is) and its own time over the floor's (how many floors it
// costs).
type versus struct {
	t *table
}

func newVersus(unit string) *versus {
	v := &versus{t: &table{right: []bool{false, false, true, true, true, true, true, true, true}}}
	v.t.add("comparison", "side", "ns/"+unit, "cpu-ns/"+unit, "allocs/"+unit, "B/"+unit, "MB/s", "obvious ÷ this", "this ÷ floor")
	return v
}

// row adds s; obvious and floor, when not nil, are what its ratios are
// taken against.
func (v *versus) row(group, side string, s stats, obvious, floor *stats) {
	if !s.ok {
		v.t.add(group, side, s.note)
		return
	}
	x := func(num, den *stats) string {
		if num == nil || den == nil || !num.ok || !den.ok || den.ns == 0 {
			return ""
		}
		return fmt.Sprintf("%.2fx", num.ns/den.ns)
	}
	cpu := "-"
	if s.cpu > 0 {
		cpu = num(s.cpu, 0)
	}
	mbps := ""
	if s.mbps > 0 {
		mbps = num(s.mbps, 0)
	}
	v.t.add(group, side, num(s.ns, 0), cpu, num(s.allocs, 1), num(s.bytes, 0), mbps, x(obvious, &s), x(&s, floor))
}

func (v *versus) write(out io.Writer) { v.t.write(out) }
