package bench

import (
	"testing"
	"time"
)

// cpuMeter measures the process's CPU time (user and system, every
// goroutine: the garbage collector's and, in SMTPLogging, the test
// server's too) over a b.Loop. On a machine shared with other work, wall
// time per operation moves with the others' load; the CPU time the
// process spends moves much less, and for a benchmark on one goroutine
// with -cpu 1 it stays near what one idle core would take.
type cpuMeter struct {
	start time.Duration
	ok    bool
}

func startCPU() cpuMeter {
	t, ok := processCPU()
	return cpuMeter{start: t, ok: ok}
}

// stop reports the CPU time per b.N × perOp as the metric unit, such as
// cpu-ns/op or cpu-ns/recipient.
func (c cpuMeter) stop(b *testing.B, perOp int, unit string) {
	if t, ok := processCPU(); ok && c.ok && b.N > 0 {
		b.ReportMetric(float64(t-c.start)/float64(b.N)/float64(perOp), unit)
	}
}

// MeasureCPU starts measuring the process's CPU time (user and system,
// every thread, the garbage collector's included) and returns what
// reports it, per b.N × perOp, as the metric unit: for benchmarks outside
// this package.
func MeasureCPU() func(b *testing.B, perOp int, unit string) {
	return startCPU().stop
}
